//! The failures the signer and the issuer share: refused before a handler ran, a request body
//! that is not JSON or cannot be read, a key file, the listening socket, a file operation, the
//! random number generator, the configuration, the database. Each
//! service's `Error` wraps [`Operational`] as one transparent variant, so the messages are these
//! and the HTTP answer for them is decided once, here.

pub use axum::http::StatusCode;

use crate::keyfile::KeyFileError;
use crate::middleware::{BodyError, Refusal};
use crate::serve::SocketError;

/// What can go wrong in any of the services, apart from their own requests and stores.
#[derive(Debug, thiserror::Error)]
pub enum Operational {
    /// Refused before any handler ran: rate limited, timed out, no such route or method.
    #[error(transparent)]
    Refused(#[from] Refusal),

    /// The body was not sent as `application/json`.
    #[error("the request body must be sent with Content-Type: application/json")]
    UnsupportedMediaType,

    /// The body is larger than the router's body limit.
    #[error("the request body is larger than 64 KiB")]
    PayloadTooLarge,

    /// The body could not be read (the client went away or sent a broken body).
    #[error("the request body could not be read")]
    UnreadableBody,

    /// The key file is missing, readable by others, malformed or in the way of `keygen`.
    #[error(transparent)]
    KeyFile(#[from] KeyFileError),

    /// The listening socket could not be bound or served on.
    #[error(transparent)]
    Socket(#[from] SocketError),

    /// A file operation failed.
    #[error("could not {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: String,
        source: std::io::Error,
    },

    /// The operating system's random number generator failed.
    #[error("the operating system's random number generator failed")]
    Random,

    /// The configuration (flags, environment) cannot be used.
    #[error("invalid configuration: {0}")]
    Config(String),

    /// The database failed (the store's message carries no URL or value).
    #[error("database: {0}")]
    Store(#[from] tacit_store::StoreError),
}

impl From<BodyError> for Operational {
    fn from(error: BodyError) -> Self {
        match error {
            BodyError::TooLarge => Operational::PayloadTooLarge,
            BodyError::Unreadable => Operational::UnreadableBody,
        }
    }
}

impl From<tacit_store::sqlx::Error> for Operational {
    fn from(error: tacit_store::sqlx::Error) -> Self {
        Operational::Store(tacit_store::StoreError::Query(error))
    }
}

impl Operational {
    /// The HTTP status and the stable code a client can match on: a refusal's or a body's own,
    /// else `internal` (500), since none of the others is the client's fault.
    pub fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            Operational::Refused(refusal) => refusal.status_and_code(),
            Operational::UnsupportedMediaType => {
                (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type")
            }
            Operational::PayloadTooLarge => (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
            Operational::UnreadableBody => (StatusCode::BAD_REQUEST, "unreadable_body"),
            _ => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        }
    }

    /// The `Retry-After` seconds the answer carries (a rate-limit refusal's).
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            Operational::Refused(refusal) => refusal.retry_after(),
            _ => None,
        }
    }
}

/// `operational_from!(Error)`: `From` a refusal, a key-file error, a socket error and the
/// database's errors for a service's `Error`, through its `Operational` variant (which takes
/// `From<Operational>`); and the answer both services give for what their own table does not
/// name: `Error::operational`, `Error::shared_status_and_code` (an operational failure's, else
/// 500 `internal`) and `Error::json_response(service)`, the JSON error answer with the status and
/// code of the service's `status_and_code` and a rate limit's `Retry-After`.
#[macro_export]
macro_rules! operational_from {
    ($error:ty) => {
        $crate::operational_from!(@one $error, $crate::middleware::Refusal);
        $crate::operational_from!(@one $error, $crate::keyfile::KeyFileError);
        $crate::operational_from!(@one $error, $crate::serve::SocketError);
        $crate::operational_from!(@one $error, ::tacit_store::StoreError);
        $crate::operational_from!(@one $error, ::tacit_store::sqlx::Error);

        impl $error {
            /// The operational failure this error is, if it is one.
            pub fn operational(&self) -> ::core::option::Option<&$crate::error::Operational> {
                match self {
                    Self::Operational(operational) => ::core::option::Option::Some(operational),
                    _ => ::core::option::Option::None,
                }
            }

            /// The status and code of an error the service's own table does not name: an
            /// operational failure's, else 500 `internal`.
            fn shared_status_and_code(&self) -> ($crate::error::StatusCode, &'static str) {
                self.operational().map_or(
                    ($crate::error::StatusCode::INTERNAL_SERVER_ERROR, "internal"),
                    $crate::error::Operational::status_and_code,
                )
            }

            /// The JSON error answer of `service` (`"signer"`, `"issuer"`) for this error.
            fn json_response(&self, service: &str) -> $crate::response::Response {
                let (status, code) = self.status_and_code();
                let retry_after = self
                    .operational()
                    .and_then($crate::error::Operational::retry_after);
                $crate::response::error_response(service, status, code, self, retry_after)
            }
        }
    };
    (@one $error:ty, $from:ty) => {
        impl ::core::convert::From<$from> for $error {
            fn from(error: $from) -> Self {
                Self::from($crate::error::Operational::from(error))
            }
        }
    };
}
