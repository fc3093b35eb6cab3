//! The one canonical tool definition. Every host (the WebMCP page, `MemoryHost`, a later MCP
//! server) registers exactly these; nothing else in the workspace defines a tool.

use serde::Serialize;
use serde_json::{Value, json};
use wallet_core::{Claim, GrantId, Origin, ToolName};

use crate::contract::{
    CheckProposalInput, CheckRequestInput, ClaimInput, DraftApplicationInput, RequestClaimsInput,
    WalletStatusInput, schema_of,
};
use crate::state::Grant;

/// The WebMCP annotations Chromium reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    pub read_only_hint: bool,
    pub untrusted_content_hint: bool,
    pub consequential_hint: bool,
}

/// How a tool comes to exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Always registered while the page lives; reveals nothing about the profile.
    Persistent,
    /// Registered only while the person's grant lives.
    ConsentGated,
    /// Its effect waits for the person's approval.
    ApprovalGated,
}

/// What the gate runs when the tool is executed. A host keeps this with the registration; a
/// stale copy of it (a "handle") is re-checked by the gate at every use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Handler {
    WalletStatus,
    RequestClaims,
    CheckRequest,
    DraftApplication,
    CheckProposal,
    /// A claim tool, bound to its grant and to the lock epoch it was granted in.
    Claim {
        grant: GrantId,
        epoch: u64,
    },
}

/// A tool as every host registers it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDef {
    pub name: ToolName,
    pub title: String,
    pub description: String,
    pub input_schema: Value,
    pub annotations: Annotations,
    pub tier: Tier,
    pub handler: Handler,
}

impl ToolDef {
    /// The fields a WebMCP `registerTool` call takes (without `execute`), as JSON.
    pub fn to_webmcp_json(&self) -> Value {
        json!({
            "name": self.name.as_str(),
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema,
            "annotations": self.annotations,
        })
    }
}

/// Optional `nonce` only: the input every claim tool accepts ([`ClaimInput`]).
pub fn claim_input_schema() -> Value {
    schema_of::<ClaimInput>()
}

/// The five persistent tools.
pub fn persistent_tools() -> Vec<ToolDef> {
    [
        Draft {
            name: "wallet_status",
            title: "Tacit wallet status".into(),
            description: "Reports whether the Tacit wallet is locked, which kinds of claim it can \
                answer, and the ids of requests and proposals waiting for the person. Never \
                returns any personal value."
                .into(),
            input_schema: schema_of::<WalletStatusInput>(),
            annotations: Annotations {
                read_only_hint: true,
                ..Annotations::default()
            },
            tier: Tier::Persistent,
            handler: Handler::WalletStatus,
        },
        Draft {
            name: "request_claims",
            title: "Ask the person to allow eligibility claims".into(),
            description: "Passes a site's eligibility policy (its origin, a nonce, the claims \
                it needs and, if the site gave one, its attestation) to the person. Nothing is \
                granted by this call: the request is held until the person decides in the \
                wallet page. Do not call it again for the same \
                policy; poll check_request with the returned request_id."
                .into(),
            input_schema: schema_of::<RequestClaimsInput>(),
            annotations: Annotations {
                untrusted_content_hint: true,
                ..Annotations::default()
            },
            tier: Tier::Persistent,
            handler: Handler::RequestClaims,
        },
        Draft {
            name: "check_request",
            title: "Check a held consent request".into(),
            description: "Reports whether the person has granted or denied a request made with \
                request_claims. When granted, lists the claim tools that now exist; when \
                denied, the person's reason."
                .into(),
            input_schema: schema_of::<CheckRequestInput>(),
            annotations: Annotations {
                read_only_hint: true,
                untrusted_content_hint: true,
                ..Annotations::default()
            },
            tier: Tier::Persistent,
            handler: Handler::CheckRequest,
        },
        Draft {
            name: "draft_application",
            title: "Draft an application receipt for a site".into(),
            description:
                "Proposes to disclose, to one audience, the outcomes (true/false only) of \
                the claims already answered for it, bound to the site's nonce. The proposal is \
                held until the person releases or refuses it; poll check_proposal."
                    .into(),
            input_schema: schema_of::<DraftApplicationInput>(),
            annotations: Annotations {
                consequential_hint: true,
                ..Annotations::default()
            },
            tier: Tier::ApprovalGated,
            handler: Handler::DraftApplication,
        },
        Draft {
            name: "check_proposal",
            title: "Check a held proposal".into(),
            description: "Reports whether the person released or refused a proposal made with \
                draft_application. When released, returns the receipt to submit to the site \
                and, for answers an issuer vouches for, the presentations to submit beside it; \
                when refused, the person's reason."
                .into(),
            input_schema: schema_of::<CheckProposalInput>(),
            annotations: Annotations {
                read_only_hint: true,
                untrusted_content_hint: true,
                ..Annotations::default()
            },
            tier: Tier::Persistent,
            handler: Handler::CheckProposal,
        },
    ]
    .into_iter()
    // The names are constants that satisfy the WebMCP rule (checked in tests/tools.rs).
    .filter_map(|d| {
        Some(ToolDef {
            name: ToolName::parse(d.name).ok()?,
            title: d.title,
            description: d.description,
            input_schema: d.input_schema,
            annotations: d.annotations,
            tier: d.tier,
            handler: d.handler,
        })
    })
    .collect()
}

struct Draft {
    name: &'static str,
    title: String,
    description: String,
    input_schema: Value,
    annotations: Annotations,
    tier: Tier,
    handler: Handler,
}

/// For the page: the tool name a grant's claim tool has.
pub fn tool_name_of(grant: &Grant) -> Option<ToolName> {
    claim_tool(&grant.claim, &grant.origin, &grant.id, grant.epoch).map(|t| t.name)
}

/// The tool a grant creates for one claim: the threshold or set is fixed in the tool; its input
/// has no parameter that could change the question.
///
/// `None` only if the name would break the WebMCP rule, which grant ids (≤ 64 characters of
/// `[A-Za-z0-9_-]`) cannot make happen.
pub fn claim_tool(
    claim: &Claim,
    audience: &Origin,
    grant: &GrantId,
    epoch: u64,
) -> Option<ToolDef> {
    let (stem, question) = describe(claim);
    Some(ToolDef {
        name: ToolName::parse(&format!("claim.{stem}.{grant}")).ok()?,
        title: format!("Tacit claim: {question}"),
        description: format!(
            "Answers, with true or false only, whether {question}. The question is fixed by the \
             person's grant for {audience}; it takes no threshold. Optional input: nonce."
        ),
        input_schema: claim_input_schema(),
        annotations: Annotations {
            read_only_hint: true,
            ..Annotations::default()
        },
        tier: Tier::ConsentGated,
        handler: Handler::Claim {
            grant: grant.clone(),
            epoch,
        },
    })
}

/// A short name stem (the claim's kind) and a sentence for a claim, from its public
/// parameters only.
/// ([`Claim::agent_sentence`], written once in the claim catalogue.)
pub fn describe(claim: &Claim) -> (&'static str, String) {
    (claim.kind(), claim.agent_sentence())
}

pub use wallet_core::profile::format_minor;
