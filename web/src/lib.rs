//! # tacit-web
//!
//! The wallet page: a thin wasm-bindgen host. It converts types, talks to the browser
//! (`document.modelContext`, the DOM, `localStorage`, IndexedDB, WebCrypto, `fetch`) and calls
//! wallet-core, capability-gate and tacit-protocol, where every rule lives. It decides nothing
//! itself.
//!
//! Trust comes from settings the person makes, never from the URL: the issuers whose credentials
//! back answers are the ones the person added (Settings → Credentials), the signer is the one this
//! browser is enrolled with (a non-extractable WebCrypto install key kept in IndexedDB signs
//! every request to it), a signer's answer counts as signed only if it verifies against that
//! signer's published keys, and a site is shown as verified only if its signature checks against
//! the keys its own origin publishes.
//!
//! The wallet's lifecycle rules (records, generations, the sealed disclosure memory, the one lock
//! path, the editor) live in `capability_gate::wallet`; this crate carries out the effects it
//! returns. A raw profile value is in the DOM only while the person has the editor open (it asks
//! for the passphrase and empties itself on close, lock and idle). Grant, Release and End session
//! act only on a trusted click followed by the person's confirmation (a verified WebAuthn
//! assertion, or the passphrase typed again). All site-supplied text is inert (`textContent`,
//! never HTML).
//!
//! Without native WebMCP the page's `webmcp.js` loads the vendored `@mcp-b/webmcp-polyfill`
//! (`vendor/webmcp-polyfill/`) before the wasm starts, and the page says "WebMCP: polyfilled";
//! `window.tacit` is offered only when there is no `document.modelContext` at all. Its
//! TypeScript typings are `web/types/tacit.d.ts`.
//!
//! On targets other than `wasm32` the crate holds only what is pure ([`host::Detection`]), so the
//! workspace builds natively; its native tests check the vendored polyfill against its recorded
//! sums and the typings against `capability_gate::Code`.

#[cfg(target_arch = "wasm32")]
mod actions;
#[cfg(target_arch = "wasm32")]
mod app;
#[cfg(target_arch = "wasm32")]
mod asker;
#[cfg(target_arch = "wasm32")]
mod choices;
#[cfg(target_arch = "wasm32")]
mod clock;
#[cfg(target_arch = "wasm32")]
mod credentials;
#[cfg(target_arch = "wasm32")]
mod decisions;
#[cfg(target_arch = "wasm32")]
mod dom;
#[cfg(target_arch = "wasm32")]
mod editor;
#[cfg(target_arch = "wasm32")]
mod focus;
pub mod host;
#[cfg(target_arch = "wasm32")]
mod intl;
#[cfg(target_arch = "wasm32")]
mod issuer;
#[cfg(target_arch = "wasm32")]
pub mod keystore;
#[cfg(target_arch = "wasm32")]
mod link;
#[cfg(target_arch = "wasm32")]
mod net;
#[cfg(target_arch = "wasm32")]
mod page;
#[cfg(target_arch = "wasm32")]
mod person;
#[cfg(target_arch = "wasm32")]
mod receipts;
#[cfg(target_arch = "wasm32")]
mod render;
#[cfg(target_arch = "wasm32")]
mod signer;
#[cfg(target_arch = "wasm32")]
mod state;
#[cfg(target_arch = "wasm32")]
mod storage;
#[cfg(target_arch = "wasm32")]
mod strength;
#[cfg(target_arch = "wasm32")]
mod told;

#[cfg(target_arch = "wasm32")]
pub use host::{Detection, WebMcpHost, detect};

/// Entry point, called once by the page's loader (`web/static/wallet.js`) when the person first
/// acts or an agent first calls a tool: builds the app. `adopted` is what the boot module's
/// `boot` returned: `[name, AbortController]` pairs of the persistent tools it registered, which
/// the app takes over instead of registering them again.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen(js_name = startWallet)]
pub fn start_wallet(adopted: js_sys::Array) {
    use wasm_bindgen::JsCast;
    let adopted = adopted
        .iter()
        .filter_map(|pair| {
            let pair = pair.dyn_into::<js_sys::Array>().ok()?;
            let name = pair.get(0).as_string()?;
            let controller = pair.get(1).dyn_into::<web_sys::AbortController>().ok()?;
            Some((name, controller))
        })
        .collect();
    // The history of ended sessions (sealed in the record): its Download and Delete buttons.
    receipts::wire_history_buttons();
    page::start(adopted);
}

/// A call to a persistent tool, forwarded by the boot module's `execute` (the app must have
/// started): resolves to the tool's envelope, as a call to the app's own registration would.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen(js_name = callTool)]
pub fn call_tool(name: &str, input: wasm_bindgen::JsValue) -> js_sys::Promise {
    app::call_adopted(name, input)
}

/// Native checks of what ships beside the wasm: the vendored polyfill, the typings, detection.
#[cfg(all(test, not(target_arch = "wasm32")))]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
mod shipped {
    use std::collections::BTreeSet;
    use std::path::PathBuf;

    use capability_gate::Code;

    use crate::host::{Detection, MARKER, POLYFILL};

    fn root() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap()
            .to_path_buf()
    }

    fn read(path: &str) -> String {
        std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// `key: value` lines of `vendor/webmcp-polyfill/VERSION`.
    fn recorded(key: &str) -> String {
        read("vendor/webmcp-polyfill/VERSION")
            .lines()
            .find_map(|line| line.strip_prefix(key)?.strip_prefix(": "))
            .unwrap_or_else(|| panic!("no `{key}:` in VERSION"))
            .trim()
            .to_owned()
    }

    fn sha256(path: &str) -> String {
        let bytes = std::fs::read(root().join(path)).unwrap();
        wallet_core::Hash::digest(&bytes).to_hex()
    }

    #[test]
    fn the_vendored_polyfill_and_its_licence_are_the_recorded_ones() {
        assert_eq!(
            sha256("vendor/webmcp-polyfill/index.iife.js"),
            recorded("file-sha256"),
            "vendor/webmcp-polyfill/index.iife.js is not the file VERSION records"
        );
        assert_eq!(
            sha256("vendor/webmcp-polyfill/LICENSE"),
            recorded("license-sha256")
        );
        assert!(read("vendor/webmcp-polyfill/LICENSE").starts_with("MIT License"));
        assert_eq!(recorded("license"), "MIT");
        // The version the page names is the vendored one.
        let (name, version) = (recorded("name"), recorded("version"));
        assert_eq!(POLYFILL, format!("{name} {version}"));
        assert_eq!(
            recorded("tarball"),
            format!(
                "https://registry.npmjs.org/@mcp-b/webmcp-polyfill/-/webmcp-polyfill-{version}.tgz"
            )
        );
        assert!(recorded("tarball-integrity").starts_with("sha512-"));
    }

    #[test]
    fn a_changed_byte_in_the_polyfill_changes_the_sum_the_check_compares() {
        // The check above would catch a one-byte edit: the sums of the file and of the file with
        // one byte changed differ.
        let mut bytes = std::fs::read(root().join("vendor/webmcp-polyfill/index.iife.js")).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        assert_ne!(
            wallet_core::Hash::digest(&bytes).to_hex(),
            recorded("file-sha256")
        );
    }

    #[test]
    fn the_loader_sets_the_marker_the_host_reads_and_loads_the_vendored_file() {
        let loader = read("web/static/webmcp.js");
        assert!(loader.contains(&format!("'{MARKER}'")), "{loader}");
        assert!(loader.contains("'./vendor/webmcp-polyfill.js'"));
        for outcome in [
            "native",
            "polyfilled",
            "polyfill-failed",
            "insecure-context",
        ] {
            assert!(loader.contains(&format!("'{outcome}'")), "{outcome}");
        }
        // Loaded only without a document.modelContext, before anything else is decided.
        let first_check = loader.find("if (document.modelContext)").unwrap();
        let load = loader.find("await loadClassic(POLYFILL)").unwrap();
        assert!(first_check < load);
    }

    /// Every `Code`, by an exhaustive match: a new variant fails to compile here until it is
    /// listed (and then until the typings carry it).
    fn all_codes() -> Vec<Code> {
        let next = |code: Option<Code>| match code {
            None => Some(Code::InvalidInput),
            Some(Code::InvalidInput) => Some(Code::WalletLocked),
            Some(Code::WalletLocked) => Some(Code::UnknownRequest),
            Some(Code::UnknownRequest) => Some(Code::UnknownProposal),
            Some(Code::UnknownProposal) => Some(Code::GrantRevoked),
            Some(Code::GrantRevoked) => Some(Code::GrantExpired),
            Some(Code::GrantExpired) => Some(Code::GrantSpent),
            Some(Code::GrantSpent) => Some(Code::DeclinedPrivacyFloor),
            Some(Code::DeclinedPrivacyFloor) => Some(Code::InvalidClaim),
            Some(Code::InvalidClaim) => Some(Code::NothingToDraft),
            Some(Code::NothingToDraft) => Some(Code::TooManyPending),
            Some(Code::TooManyPending) => Some(Code::Busy),
            Some(Code::Busy) => Some(Code::UnknownTool),
            Some(Code::UnknownTool) => None,
        };
        std::iter::successors(next(None), |c| next(Some(*c))).collect()
    }

    /// The string literals of `export type <name> = 'a' | 'b' ...;` in the typings.
    fn union(name: &str) -> BTreeSet<String> {
        let dts = read("web/types/tacit.d.ts");
        let start = dts
            .find(&format!("export type {name} ="))
            .unwrap_or_else(|| panic!("no `export type {name}` in tacit.d.ts"));
        let body = &dts[start..];
        let body = &body[..body.find(';').unwrap()];
        body.lines()
            .filter_map(|line| {
                let line = line.trim().strip_prefix("| '")?;
                Some(line[..line.find('\'')?].to_owned())
            })
            .collect()
    }

    #[test]
    fn the_typings_carry_every_refusal_code_and_no_other() {
        let codes: BTreeSet<String> = all_codes()
            .into_iter()
            .map(|c| c.as_str().to_owned())
            .collect();
        assert_eq!(codes.len(), 13);
        assert_eq!(union("TacitCode"), codes);
    }

    #[test]
    fn the_typings_carry_every_status_and_no_other() {
        let every = [
            Detection::Available,
            Detection::Polyfilled,
            Detection::Scripted,
            Detection::Absent,
            Detection::PolyfillFailed,
            Detection::InsecureContext,
            Detection::SupersededApi,
            Detection::RegistrationRefused(String::new()),
        ];
        // Exhaustive: a new variant must be added to `every` above.
        for d in &every {
            match d {
                Detection::Available
                | Detection::Polyfilled
                | Detection::Scripted
                | Detection::Absent
                | Detection::PolyfillFailed
                | Detection::InsecureContext
                | Detection::SupersededApi
                | Detection::RegistrationRefused(_) => {}
            }
        }
        let codes: BTreeSet<String> = every.iter().map(|d| d.code().to_owned()).collect();
        let listed: BTreeSet<String> = Detection::CODES.iter().map(|c| (*c).to_owned()).collect();
        assert_eq!(codes, listed);
        assert_eq!(union("TacitWebmcpStatus"), codes);
    }

    #[test]
    fn the_typings_describe_the_envelope_the_gate_returns() {
        let dts = read("web/types/tacit.d.ts");
        for needle in [
            "readonly ok: true;",
            "readonly result: R;",
            "readonly ok: false;",
            "readonly isError: true;",
            "readonly code: TacitCode;",
            "readonly message: string;",
            "readonly tacit?: TacitApi;",
        ] {
            assert!(dts.contains(needle), "{needle}");
        }
        let refused = capability_gate::envelope::envelope(&Err(capability_gate::Refusal::new(
            Code::GrantRevoked,
            "gone",
        )));
        let keys: Vec<&str> = refused
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["error", "isError", "ok"]);
    }

    #[test]
    fn the_pill_says_polyfilled_with_the_version_and_what_it_drops() {
        assert_eq!(Detection::Polyfilled.code(), "polyfilled");
        let text = Detection::Polyfilled.describe();
        assert!(
            text.starts_with("WebMCP: polyfilled (@mcp-b/webmcp-polyfill 5.1.0)"),
            "{text}"
        );
        assert!(text.contains("consequentialHint"), "{text}");
        assert_eq!(Detection::PolyfillFailed.code(), "absent");
        assert!(
            Detection::PolyfillFailed
                .describe()
                .contains("window.tacit")
        );
        assert_ne!(Detection::Available.code(), Detection::Polyfilled.code());
    }
}
