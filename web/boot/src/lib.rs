//! # tacit-wallet-boot
//!
//! The wallet page's first load. The app (`tacit-web`: the gate, the vault, the crypto, every
//! card) is large; this module is what a visit costs before the person or an agent uses the
//! wallet. It registers the wallet's persistent tools on `document.modelContext`, so an agent
//! finds them at once, and draws the form the person needs first (create a profile, or unlock
//! it). Each tool's `execute` forwards to the page's loader (`web/wallet-boot.js`), which loads
//! the app on that first call (or on the person's first act on the page) and hands the call to
//! it. The app takes these registrations over (`WebMcpHost`'s adopted registrations) instead of
//! registering the tools again: an agent sees no tool withdrawn and re-added.
//!
//! It decides nothing and holds nothing: the tools' definitions are
//! `capability_gate::tool::persistent_tools`, what WebMCP the page has is
//! `capability_gate::host::Seen::decide`, and the record's key is
//! `capability_gate::wallet::RECORD_KEY`; every answer comes from the app's gate.

#[cfg(target_arch = "wasm32")]
mod glue {
    use capability_gate::host::{Detection, Seen};
    use capability_gate::tool::persistent_tools;
    use capability_gate::wallet::RECORD_KEY;
    use js_sys::{Array, Function, Promise};
    use wasm_bindgen::JsCast;
    use wasm_bindgen::prelude::*;

    /// Registers the persistent tools, each forwarding its calls to `forward(name, input)`
    /// (a promise of the app's answer), and draws the first view. Returns the registrations as
    /// `[name, AbortController]` pairs, for the app to adopt; a tool the registry refused is
    /// not among them (the app registers it itself and reports the refusal).
    #[wasm_bindgen]
    pub fn boot(forward: Function) -> Array {
        let adopted = Array::new();
        // A vault registers no tool: its paired bridges do (issue 29).
        let vault = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.query_selector("meta[name=tacit-role]").ok().flatten())
            .and_then(|m| m.get_attribute("content"))
            .as_deref()
            == Some("vault");
        if let Some(ctx) = tacit_webmcp::model_context().filter(|_| !vault) {
            for def in persistent_tools() {
                let name = def.name.as_str().to_owned();
                let (to, tool) = (forward.clone(), JsValue::from_str(&name));
                let execute = tacit_webmcp::execute_fn(move |input| {
                    to.call2(&JsValue::NULL, &tool, &input)
                        .ok()
                        .and_then(|answer| answer.dyn_into::<Promise>().ok())
                        .unwrap_or_else(|| Promise::reject(&"the wallet did not start".into()))
                });
                if let Ok(registration) =
                    tacit_webmcp::register(&ctx, &def.to_webmcp_json(), &execute, |_| {})
                {
                    adopted.push(&Array::of2(
                        &JsValue::from_str(&name),
                        &registration.into_controller(),
                    ));
                }
            }
        }
        draw(&Seen::of(&tacit_webmcp::observe()).decide());
        adopted
    }

    /// The first view: the pills, and the create form (first visit) or the unlock form. The
    /// rest of `#app` stays hidden by `data-stage="boot"` (style.css) until the app draws it.
    fn draw(detection: &Detection) {
        let Some(window) = web_sys::window() else {
            return;
        };
        let Some(document) = window.document() else {
            return;
        };
        let by_id = |id: &str| document.get_element_by_id(id);
        let show = |id: &str, shown: bool| {
            if let Some(e) = by_id(id) {
                let _ = if shown {
                    e.remove_attribute("hidden")
                } else {
                    e.set_attribute("hidden", "")
                };
            }
        };
        if let Some(pill) = by_id("webmcp-pill") {
            pill.set_text_content(Some(&format!("WebMCP: {}", detection.code())));
            pill.set_class_name(&format!("pill {}", detection.tone()));
            let _ = pill.set_attribute("title", &detection.describe());
        }
        let stored = window
            .local_storage()
            .ok()
            .flatten()
            .and_then(|s| s.get_item(RECORD_KEY).ok().flatten())
            .is_some();
        show("setup", !stored);
        show("setup-actions", !stored);
        show("unlock", stored);
        if let Some(main) = by_id("app") {
            let _ = main.set_attribute("data-stage", "boot");
        }
        show("boot-note", false);
        show("app", true);
    }
}
