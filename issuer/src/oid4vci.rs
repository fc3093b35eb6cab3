//! OpenID4VCI 1.0 on the issuer's origin ([`tacit_protocol::oid4vci`] holds the rules): the
//! credential issuer and authorization server metadata, the token endpoint (pre-authorized
//! code with transaction code; refresh token), the nonce endpoint and the credential endpoint.
//!
//! | route                                      | what                                            |
//! |--------------------------------------------|-------------------------------------------------|
//! | `GET /.well-known/openid-credential-issuer`| credential issuer metadata (one configuration)  |
//! | `GET /.well-known/oauth-authorization-server` | the token endpoint and its grants            |
//! | `POST /token`                              | access token + refresh token (form-encoded)     |
//! | `POST /nonce`                              | `{"c_nonce"}`, single-use, five minutes         |
//! | `POST /credential`                         | a batch: one SD-JWT VC per `proofs.jwt` entry   |
//!
//! Refusals are `{"error", "error_description"}` with OAuth's and OpenID4VCI's codes; a bad
//! access token is 401 with `WWW-Authenticate: Bearer error="invalid_token"`. The redemption
//! rules are the database's ([`crate::IssuerDb::token`], [`crate::IssuerDb::redeem`]): every
//! grant single-use, nothing consumed by a refused request.

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tacit_protocol::oid4vci::{
    self, CredentialOffer, IssuerDescription, TokenRequest, TokenResponse, TxCode,
};
use tacit_protocol::predicates::IssuerAttribute;
use tacit_protocol::status_list::{STATUS_PATH, StatusRef};
use tacit_service::error::Operational;
use tacit_service::middleware::{read_body, read_json_body};

use crate::credential::{Issuance, issue_batch};
use crate::db::{Enrolment, Grant, TokenGrant};
use crate::{AppState, Attribute, Error, MAX_BATCH};

/// The id of an issuer's one credential configuration: its attribute (`income`, `birth_date`).
pub fn configuration_id(attribute: Attribute) -> &'static str {
    attribute.as_str()
}

/// The credential offer for `enrolment` at the issuer `issuer` of `attribute`: its
/// pre-authorized code, with the enrolment code as the transaction code the person types.
pub fn credential_offer(
    issuer: &str,
    attribute: Attribute,
    enrolment: &Enrolment,
) -> CredentialOffer {
    CredentialOffer {
        credential_issuer: issuer.to_owned(),
        credential_configuration_ids: vec![configuration_id(attribute).to_owned()],
        pre_authorized_code: enrolment.pre_authorized_code.clone(),
        tx_code: TxCode::enrolment_code(),
    }
}

/// The predicates an issuer of `attribute` may disclose (names only).
fn claim_names(attribute: Attribute) -> Vec<String> {
    IssuerAttribute::parse(attribute.as_str())
        .map(IssuerAttribute::claim_names)
        .unwrap_or_default()
}

/// What the issuer says of itself, for both metadata documents.
fn describe<'a>(state: &'a AppState, claims: &'a [String]) -> IssuerDescription<'a> {
    IssuerDescription {
        issuer: state.issuer(),
        name: state.name(),
        configuration_id: configuration_id(state.attribute()),
        vct: state.vct(),
        claims,
        batch_size: MAX_BATCH,
    }
}

fn json_document(value: serde_json::Value) -> Response {
    (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "public, max-age=300"),
        ],
        value.to_string(),
    )
        .into_response()
}

/// `GET /.well-known/openid-credential-issuer`.
pub async fn issuer_metadata(State(state): State<AppState>) -> Response {
    let claims = claim_names(state.attribute());
    json_document(describe(&state, &claims).metadata())
}

/// `GET /.well-known/oauth-authorization-server`.
pub async fn authorization_server(State(state): State<AppState>) -> Response {
    json_document(describe(&state, &[]).authorization_server())
}

/// A refusal of the OAuth kind: `{"error", "error_description"}`, never cached.
#[derive(Debug)]
pub enum Refusal {
    /// A status, a code and a fixed sentence.
    Oauth {
        status: StatusCode,
        code: &'static str,
        description: String,
    },
    /// 401 `invalid_token`, with the `WWW-Authenticate` challenge.
    InvalidToken { description: String },
    /// Not the client's fault, or refused before the handler's rules: the issuer's usual
    /// answer.
    Other(Error),
}

impl Refusal {
    fn oauth(status: StatusCode, code: &'static str, description: impl ToString) -> Self {
        Refusal::Oauth {
            status,
            code,
            description: description.to_string(),
        }
    }
}

impl From<Operational> for Refusal {
    fn from(error: Operational) -> Self {
        Refusal::Other(error.into())
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let (status, code, description, challenge) = match self {
            Refusal::Oauth {
                status,
                code,
                description,
            } => (status, code, description, false),
            Refusal::InvalidToken { description } => {
                (StatusCode::UNAUTHORIZED, "invalid_token", description, true)
            }
            Refusal::Other(error) => return error.into_response(),
        };
        tracing::info!(code, "refused");
        let body = serde_json::json!({ "error": code, "error_description": description });
        let mut response = (
            status,
            [
                (header::CONTENT_TYPE, "application/json"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            body.to_string(),
        )
            .into_response();
        if challenge {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer error=\"invalid_token\""),
            );
        }
        response
    }
}

fn no_store(body: serde_json::Value) -> Response {
    (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body.to_string(),
    )
        .into_response()
}

fn is_form(request: &Request) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| {
            essence
                .trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        })
}

/// `POST /token`: redeems a pre-authorized code with its transaction code, or a refresh token,
/// for a single-use access token and the next refresh token.
pub async fn token(State(state): State<AppState>, request: Request) -> Result<Response, Refusal> {
    if !is_form(&request) {
        return Err(Operational::UnsupportedMediaType.into());
    }
    let body = read_body(request).await.map_err(Operational::from)?;
    let request = oid4vci::parse_token_request(&body)
        .map_err(|e| Refusal::oauth(StatusCode::BAD_REQUEST, e.code(), e))?;
    let grant = match &request {
        TokenRequest::PreAuthorized {
            pre_authorized_code,
            tx_code,
        } => TokenGrant::PreAuthorized {
            pre_authorized_code,
            tx_code,
        },
        TokenRequest::Refresh { refresh_token } => TokenGrant::Refresh(refresh_token),
    };
    let (access, refresh) = state
        .db()
        .token(grant, state.now())
        .await
        .map_err(|e| match e {
            Error::CodeRefused | Error::RefreshRefused | Error::Revoked => {
                Refusal::oauth(StatusCode::BAD_REQUEST, "invalid_grant", e)
            }
            other => Refusal::Other(other),
        })?;
    let answer = TokenResponse::bearer(access, refresh);
    Ok(no_store(serde_json::to_value(answer).unwrap_or_default()))
}

/// `POST /nonce`: a fresh single-use `c_nonce`.
pub async fn nonce(State(state): State<AppState>) -> Result<Response, Error> {
    let (nonce, _) = state.db().make_nonce(state.now()).await?;
    Ok(no_store(oid4vci::nonce_response(&nonce)))
}

/// `POST /credential`: checks the request and every proof, then redeems the access token and
/// the nonce and signs the batch in one transaction.
pub async fn credential(
    State(state): State<AppState>,
    request: Request,
) -> Result<Response, Refusal> {
    let authorization = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let Some(access) = oid4vci::bearer_token(authorization.as_deref()).map(str::to_owned) else {
        return Err(Refusal::InvalidToken {
            description: "send the access token from the token endpoint as Authorization: Bearer"
                .to_owned(),
        });
    };
    let body = read_json_body(request).await?;
    let now = state.now();
    let checked = oid4vci::check_credential_request(
        &body,
        state.issuer(),
        configuration_id(state.attribute()),
        now,
    )
    .map_err(|e| Refusal::oauth(StatusCode::BAD_REQUEST, e.code(), e))?;
    let mut redemption = state
        .db()
        .redeem(&checked.nonce, Grant::AccessToken(&access), now)
        .await
        .map_err(|e| match e {
            Error::AccessTokenRefused | Error::Revoked => Refusal::InvalidToken {
                description: e.to_string(),
            },
            Error::NonceRefused => Refusal::oauth(
                StatusCode::BAD_REQUEST,
                "invalid_nonce",
                "the c_nonce is unknown, already used or expired; fetch a fresh one",
            ),
            Error::NoRecord => {
                Refusal::oauth(StatusCode::BAD_REQUEST, "invalid_credential_request", e)
            }
            other => Refusal::Other(other),
        })?;
    let (_, expires_ms) = crate::predicates::credential_lifetime(now.millis())
        .map_err(|e| Refusal::Other(e.into()))?;
    let uri = format!("{}{STATUS_PATH}", state.issuer());
    let statuses: Vec<StatusRef> = redemption
        .status_indexes(
            checked.holder_jwks.len(),
            now,
            wallet_core::Timestamp::from_millis(expires_ms),
            random_u64,
        )
        .await
        .map_err(Refusal::Other)?
        .into_iter()
        .map(|idx| StatusRef {
            idx,
            uri: uri.clone(),
        })
        .collect();
    let issuance = Issuance {
        iss: state.issuer(),
        vct: state.vct(),
        attribute: state.attribute(),
    };
    let keys = state.keys();
    let (credentials, expires_at) = issue_batch(
        keys.signing_key(),
        keys.active_kid(),
        &issuance,
        &redemption.person,
        &checked.holder_jwks,
        &statuses,
        now,
        random_salt,
    )
    .map_err(|e| match e {
        Error::NoRecord => Refusal::oauth(StatusCode::BAD_REQUEST, "invalid_credential_request", e),
        other => Refusal::Other(other),
    })?;
    redemption
        .commit(now, credentials.len(), expires_at)
        .await
        .map_err(Refusal::Other)?;
    tracing::info!(
        credentials = credentials.len(),
        kid = keys.active_kid(),
        "issued a batch (OpenID4VCI)"
    );
    Ok(no_store(oid4vci::credential_response(&credentials)))
}

/// A random status list draw.
pub(crate) fn random_u64() -> Result<u64, Error> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|_| Operational::Random)?;
    Ok(u64::from_le_bytes(bytes))
}

/// A random disclosure salt.
pub(crate) fn random_salt() -> Result<[u8; 16], Error> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|_| Operational::Random)?;
    Ok(salt)
}
