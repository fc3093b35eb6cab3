//! `fetch` for the page: CORS, no cookies, no redirects followed (a signer or site that answers
//! with a redirect is refused rather than followed elsewhere), and a time limit.

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use wallet_core::Origin;

use crate::host::error_text;

/// How long any request may take.
const TIMEOUT_MS: u32 = 15_000;

/// An HTTP answer: status and body text.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub text: String,
}

impl Reply {
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// `HTTP 401 unknown_install` from a `{ "error": code, "message": … }` body, or the status.
    pub fn describe(&self) -> String {
        let code = serde_json::from_str::<serde_json::Value>(&self.text)
            .ok()
            .and_then(|v| {
                v["error"]
                    .as_str()
                    .map(|s| s.chars().take(60).collect::<String>())
            });
        match code {
            Some(code) => format!("HTTP {} {code}", self.status),
            None => format!("HTTP {}", self.status),
        }
    }

    /// The `message` sentence of a JSON error body, shortened.
    pub fn message(&self) -> Option<String> {
        let value = serde_json::from_str::<serde_json::Value>(&self.text).ok()?;
        let message: String = value["message"].as_str()?.chars().take(200).collect();
        Some(message)
    }
}

/// Why no HTTP answer arrived (network, CORS, redirect, timeout, or no browser to ask).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// The browser's error, as `name: message`.
    #[error("{0}")]
    Browser(String),
    #[error("no window")]
    NoWindow,
    #[error("no response")]
    NoResponse,
}

impl FetchError {
    fn browser(e: &JsValue) -> Self {
        FetchError::Browser(error_text(e))
    }
}

/// An origin as the person typed it: trimmed, a trailing `/` forgiven (the signer's and the
/// issuers' address fields).
pub fn parse_origin(text: &str) -> Option<Origin> {
    let text = text.trim();
    Origin::parse(text.strip_suffix('/').unwrap_or(text)).ok()
}

/// Sends one request. `Err` only when no HTTP answer arrived (network, CORS, redirect, timeout).
pub async fn fetch(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Result<Reply, FetchError> {
    let init = web_sys::RequestInit::new();
    init.set_method(method);
    init.set_mode(web_sys::RequestMode::Cors);
    init.set_credentials(web_sys::RequestCredentials::Omit);
    init.set_redirect(web_sys::RequestRedirect::Error);
    init.set_cache(web_sys::RequestCache::NoStore);
    if let Some(body) = body {
        init.set_body(&JsValue::from_str(body));
    }
    let abort = web_sys::AbortController::new().map_err(|e| FetchError::browser(&e))?;
    init.set_signal(Some(&abort.signal()));
    let request =
        web_sys::Request::new_with_str_and_init(url, &init).map_err(|e| FetchError::browser(&e))?;
    for (name, value) in headers {
        request
            .headers()
            .set(name, value)
            .map_err(|e| FetchError::browser(&e))?;
    }
    let window = web_sys::window().ok_or(FetchError::NoWindow)?;
    let timer = gloo_timers::callback::Timeout::new(TIMEOUT_MS, move || abort.abort());
    let outcome = async {
        let response: web_sys::Response = JsFuture::from(window.fetch_with_request(&request))
            .await
            .map_err(|e| FetchError::browser(&e))?
            .dyn_into()
            .map_err(|_| FetchError::NoResponse)?;
        let text = JsFuture::from(response.text().map_err(|e| FetchError::browser(&e))?)
            .await
            .map_err(|e| FetchError::browser(&e))?
            .as_string()
            .unwrap_or_default();
        Ok(Reply {
            status: response.status(),
            text,
        })
    }
    .await;
    drop(timer);
    outcome
}
