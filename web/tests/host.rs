//! Glue tests of `WebMcpHost` in real Chromium (wasm-bindgen-test via chromedriver, with
//! `--enable-blink-features=WebMCP` from `web/webdriver.json`). These check the binding only;
//! the product is tested end to end in `tests/` through the DevTools WebMCP domain.

#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::rc::Rc;

use capability_gate::tool::persistent_tools;
use capability_gate::{Host, HostError, ToolDef};
use js_sys::{Array, Function, Object, Promise, Reflect};
use tacit_web::host::model_context;
use tacit_web::{Detection, WebMcpHost, detect};
use wallet_core::ToolName;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn tool(name: &str) -> ToolDef {
    let mut def = persistent_tools().remove(0);
    def.name = ToolName::parse(name).unwrap();
    def
}

fn host() -> WebMcpHost {
    host_adopting(std::collections::BTreeMap::new())
}

fn host_adopting(
    adopted: std::collections::BTreeMap<String, web_sys::AbortController>,
) -> WebMcpHost {
    let executor = Rc::new(|name: String, _handler, input: JsValue| {
        let out = Object::new();
        Reflect::set(&out, &"ok".into(), &JsValue::TRUE).unwrap();
        Reflect::set(&out, &"tool".into(), &name.into()).unwrap();
        Reflect::set(&out, &"input".into(), &input).unwrap();
        Promise::resolve(&JsValue::from(out))
    });
    WebMcpHost::new(executor, Rc::new(|_| {}), adopted, false)
}

/// `document.modelContext`, and the tools its `getTools()` lists now.
async fn live_tools() -> (JsValue, Array) {
    let ctx = model_context().expect("document.modelContext");
    let get: Function = Reflect::get(&ctx, &"getTools".into())
        .unwrap()
        .dyn_into()
        .unwrap();
    let list = JsFuture::from(Promise::resolve(&get.call0(&ctx).unwrap()))
        .await
        .unwrap();
    (ctx, Array::from(&list))
}

async fn live_names() -> Vec<String> {
    live_tools()
        .await
        .1
        .iter()
        .filter_map(|t| Reflect::get(&t, &"name".into()).ok()?.as_string())
        .collect()
}

#[wasm_bindgen_test]
fn detection_reports_available_with_the_flag() {
    assert_eq!(
        detect(),
        Detection::Available,
        "document.modelContext is missing: run Chromium with --enable-blink-features=WebMCP"
    );
}

#[wasm_bindgen_test]
async fn register_lists_and_drop_withdraws() {
    let mut host = host();
    assert!(host.uses_webmcp());
    let registration = host.register(&tool("glue_register")).unwrap();
    assert!(live_names().await.contains(&"glue_register".to_owned()));
    assert_eq!(
        host.register(&tool("glue_register")).unwrap_err(),
        HostError::Duplicate("glue_register".into())
    );
    drop(registration);
    assert!(
        !live_names().await.contains(&"glue_register".to_owned()),
        "withdrawn on drop"
    );
    assert!(host.list().is_empty());
    // The name can be registered again after withdrawal.
    let _again = host.register(&tool("glue_register")).unwrap();
    assert!(live_names().await.contains(&"glue_register".to_owned()));
}

/// The boot module's registration of a tool, as `web/boot` makes it: `execute` answers
/// `"boot"`; returns its controller, the tool left registered.
fn boot_registration(name: &str) -> web_sys::AbortController {
    let ctx = model_context().unwrap();
    let execute = tacit_webmcp::execute_fn(|_| Promise::resolve(&JsValue::from_str("boot")));
    tacit_webmcp::register(&ctx, &tool(name).to_webmcp_json(), &execute, |_| {})
        .unwrap()
        .into_controller()
}

#[wasm_bindgen_test]
async fn an_adopted_registration_is_taken_over_not_registered_again_and_drop_withdraws_it() {
    let controller = boot_registration("glue_adopted");
    assert!(live_names().await.contains(&"glue_adopted".to_owned()));
    // Before the host registers the name, a forwarded call has nothing to run.
    let mut host = host_adopting([("glue_adopted".to_owned(), controller)].into());
    assert!(host.call_adopted("glue_adopted", JsValue::NULL).is_none());
    // Registering it adopts the boot module's registration: no duplicate, listed once.
    let registration = host.register(&tool("glue_adopted")).unwrap();
    let names = live_names().await;
    assert_eq!(
        names.iter().filter(|n| *n == "glue_adopted").count(),
        1,
        "{names:?}"
    );
    assert_eq!(host.list(), ["glue_adopted"]);
    // A call the boot module forwards runs through the host's executor.
    let input = js_sys::JSON::parse(r#"{"nonce":"n1"}"#).unwrap();
    let out = JsFuture::from(host.call_adopted("glue_adopted", input).unwrap())
        .await
        .unwrap();
    assert_eq!(Reflect::get(&out, &"tool".into()).unwrap(), "glue_adopted");
    // Dropping the adopted registration aborts the boot module's controller: withdrawn.
    drop(registration);
    assert!(!live_names().await.contains(&"glue_adopted".to_owned()));
    assert!(host.call_adopted("glue_adopted", JsValue::NULL).is_none());
    // Registered again later, it is the host's own registration.
    let _again = host.register(&tool("glue_adopted")).unwrap();
    assert!(live_names().await.contains(&"glue_adopted".to_owned()));
}

#[wasm_bindgen_test]
async fn a_name_not_adopted_is_registered_again_and_the_browser_refuses_the_duplicate() {
    let _controller = boot_registration("glue_not_adopted");
    let refused = Rc::new(std::cell::RefCell::new(Vec::<String>::new()));
    let seen = refused.clone();
    let executor = Rc::new(|_: String, _, _: JsValue| Promise::resolve(&JsValue::NULL));
    let mut host = WebMcpHost::new(
        executor,
        Rc::new(move |e: String| seen.borrow_mut().push(e)),
        std::collections::BTreeMap::new(),
        false,
    );
    // Not handed over: the browser refuses the same name twice (InvalidStateError), at once or
    // by rejecting the registration later (the page then says `registration-refused`).
    let at_once = host.register(&tool("glue_not_adopted")).err();
    gloo_timers::future::sleep(std::time::Duration::from_millis(50)).await;
    let later = refused.borrow().clone();
    assert!(
        at_once.is_some() || later.iter().any(|e| e.contains("glue_not_adopted")),
        "a duplicate registration was accepted: {at_once:?} {later:?}"
    );
    let names = live_names().await;
    assert_eq!(
        names.iter().filter(|n| *n == "glue_not_adopted").count(),
        1,
        "{names:?}"
    );
}

#[wasm_bindgen_test]
async fn execute_returns_a_plain_object_through_the_registry() {
    let mut host = host();
    let _registration = host.register(&tool("glue_execute")).unwrap();
    let (ctx, list) = live_tools().await;
    let entry = list
        .iter()
        .find(|t| {
            Reflect::get(t, &"name".into())
                .unwrap()
                .as_string()
                .as_deref()
                == Some("glue_execute")
        })
        .unwrap();
    let execute: Function = Reflect::get(&ctx, &"executeTool".into())
        .unwrap()
        .dyn_into()
        .unwrap();
    let input = js_sys::JSON::parse(r#"{"nonce":"abc"}"#).unwrap();
    let text = JsFuture::from(Promise::resolve(
        &execute.call2(&ctx, &entry, &input).unwrap(),
    ))
    .await
    .unwrap();
    let out: serde_json::Value = serde_json::from_str(&text.as_string().unwrap()).unwrap();
    assert_eq!(out["ok"], true);
    assert_eq!(out["tool"], "glue_execute");
    assert_eq!(out["input"]["nonce"], "abc");
}
