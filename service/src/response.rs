//! How the signer's and the issuer's errors look on the wire: `{ "error": code, "message":
//! sentence }` with `Content-Type: application/json`, and `Retry-After` on a rate-limited answer.
//! A 500 is answered without details (the error goes to the server's own log); any other refusal
//! carries the error's fixed sentence.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::IntoResponse;
pub use axum::response::Response;
use serde::Serialize;

/// The JSON body of every error response.
#[derive(Debug, Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
    message: String,
}

/// The answer to `error`, which the service (`"signer"`, `"issuer"`) maps to `status` and `code`.
pub fn error_response(
    service: &str,
    status: StatusCode,
    code: &'static str,
    error: &dyn core::fmt::Display,
    retry_after_secs: Option<u64>,
) -> Response {
    let message = if status == StatusCode::INTERNAL_SERVER_ERROR {
        // Paths, OS errors and the like stay in the server's own log.
        tracing::error!(error = %error, "internal error");
        format!("the {service} could not complete the request")
    } else {
        tracing::info!(code, status = status.as_u16(), "request refused");
        error.to_string()
    };
    let body = serde_json::to_vec(&ErrorBody {
        error: code,
        message,
    })
    .unwrap_or_else(|_| br#"{"error":"internal","message":"internal error"}"#.to_vec());
    let mut response = (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response();
    if let Some(secs) = retry_after_secs {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    response
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn body_of(response: Response) -> serde_json::Value {
        let bytes = futures_body(response);
        serde_json::from_slice(&bytes).unwrap()
    }

    fn futures_body(response: Response) -> Vec<u8> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            axum::body::to_bytes(response.into_body(), 1 << 16)
                .await
                .unwrap()
                .to_vec()
        })
    }

    #[test]
    fn refusals_carry_the_sentence_and_internal_errors_do_not() {
        let refused = error_response(
            "signer",
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            &"slow down",
            Some(7),
        );
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(refused.headers()[header::RETRY_AFTER], "7");
        assert_eq!(refused.headers()[header::CONTENT_TYPE], "application/json");
        let body = body_of(refused);
        assert_eq!(body["error"], "rate_limited");
        assert_eq!(body["message"], "slow down");

        let internal = error_response(
            "issuer",
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            &"could not open /secret/path",
            None,
        );
        assert!(internal.headers().get(header::RETRY_AFTER).is_none());
        let body = body_of(internal);
        assert_eq!(body["error"], "internal");
        assert_eq!(body["message"], "the issuer could not complete the request");
    }
}
