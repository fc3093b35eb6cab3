//! Small DOM helpers. Text goes in with `textContent` only, so nothing a site or an agent sends
//! can become markup.

use wasm_bindgen::JsCast;
use web_sys::{Document, Element, HtmlElement, HtmlInputElement, HtmlSelectElement};

pub fn document() -> Option<Document> {
    web_sys::window()?.document()
}

pub fn by_id(id: &str) -> Option<Element> {
    document()?.get_element_by_id(id)
}

/// A new element with a class (may be empty) and text.
pub fn el(tag: &str, class: &str, text: &str) -> Element {
    let element = document()
        .and_then(|d| d.create_element(tag).ok())
        .unwrap_or_else(|| web_sys::Element::from(wasm_bindgen::JsValue::NULL));
    if !class.is_empty() {
        element.set_class_name(class);
    }
    if !text.is_empty() {
        element.set_text_content(Some(text));
    }
    element
}

pub fn attr(element: &Element, name: &str, value: &str) -> Element {
    let _ = element.set_attribute(name, value);
    element.clone()
}

/// A button that the page's single click listener dispatches by `data-action`.
pub fn button(label: &str, action: &str, id: &str, class: &str) -> Element {
    let b = el("button", class, label);
    attr(&b, "data-action", action);
    attr(&b, "data-id", id);
    b
}

pub fn append(parent: &Element, child: &Element) {
    let _ = parent.append_child(child);
}

/// Replaces the children of `#id` with `children`.
pub fn fill(id: &str, children: Vec<Element>) {
    if let Some(target) = by_id(id) {
        target.set_text_content(None);
        for child in children {
            append(&target, &child);
        }
    }
}

pub fn set_text(id: &str, text: &str) {
    if let Some(e) = by_id(id) {
        e.set_text_content(Some(text));
    }
}

/// Sets a status line's text and its `ok`/`error` class.
pub fn set_msg(id: &str, text: &str, ok: bool) {
    if let Some(e) = by_id(id) {
        e.set_text_content(Some(text));
        e.set_class_name(if ok { "msg ok" } else { "msg error" });
    }
}

pub fn show(id: &str, visible: bool) {
    if let Some(e) = by_id(id).and_then(|e| e.dyn_into::<HtmlElement>().ok()) {
        e.set_hidden(!visible);
    }
}

pub fn set_pill(id: &str, text: &str, tone: &str) {
    if let Some(e) = by_id(id) {
        e.set_text_content(Some(text));
        e.set_class_name(&format!("pill {tone}"));
    }
}

pub fn input(id: &str) -> Option<HtmlInputElement> {
    by_id(id)?.dyn_into::<HtmlInputElement>().ok()
}

pub fn value(id: &str) -> String {
    if let Some(i) = input(id) {
        return i.value();
    }
    by_id(id)
        .and_then(|e| e.dyn_into::<HtmlSelectElement>().ok())
        .map(|s| s.value())
        .unwrap_or_default()
}

/// A passphrase field's text with its NFC form from the browser's `String.prototype.normalize`
/// (the core carries no Unicode tables in the page; see `wallet_core::Typed`).
pub fn passphrase(id: &str) -> wallet_core::Normalized {
    normalized(value(id))
}

/// `typed` with its NFC form from the browser.
pub fn normalized(typed: String) -> wallet_core::Normalized {
    let nfc = js_sys::JsString::from(typed.as_str()).normalize("NFC");
    wallet_core::Normalized::new(typed, nfc.into())
}

pub fn set_value(id: &str, v: &str) {
    if let Some(i) = input(id) {
        i.set_value(v);
    } else if let Some(s) = by_id(id).and_then(|e| e.dyn_into::<HtmlSelectElement>().ok()) {
        s.set_value(v);
    }
}

/// Clears a password field.
pub fn clear(id: &str) {
    set_value(id, "");
}

/// All elements under `root` matching `selector`.
pub fn query_all(root: &Element, selector: &str) -> Vec<Element> {
    let Ok(list) = root.query_selector_all(selector) else {
        return Vec::new();
    };
    (0..list.length())
        .filter_map(|i| list.item(i))
        .filter_map(|n| n.dyn_into::<Element>().ok())
        .collect()
}

pub fn checked(element: &Element) -> bool {
    element
        .dyn_ref::<HtmlInputElement>()
        .is_some_and(HtmlInputElement::checked)
}

/// Sets the value of a `<select>` or `<input>` element directly.
pub fn set_value_of(element: &Element, v: &str) {
    if let Some(s) = element.dyn_ref::<HtmlSelectElement>() {
        s.set_value(v);
    } else if let Some(i) = element.dyn_ref::<HtmlInputElement>() {
        i.set_value(v);
    }
}

/// The element `#dom_id` if it is a child of `parent` drawn from the same `key` (its
/// `data-key`), so that what the person ticked, chose or typed in it stays; otherwise a new one
/// from `build`, marked with `id` and `key`.
pub fn keep_or_build(
    parent: &Element,
    dom_id: &str,
    key: &str,
    build: impl FnOnce() -> Element,
) -> (Element, bool) {
    let existing = by_id(dom_id).filter(|e| {
        e.parent_element().as_ref() == Some(parent)
            && e.get_attribute("data-key").as_deref() == Some(key)
    });
    match existing {
        Some(e) => (e, true),
        None => {
            let e = build();
            attr(&e, "id", dom_id);
            attr(&e, "data-key", key);
            (e, false)
        }
    }
}

/// Makes `parent`'s children exactly `wanted`, in that order, moving only what is out of place
/// (a kept element is not re-created, so its inputs keep their state).
pub fn sync_children(parent: &Element, wanted: &[Element]) {
    for (i, child) in wanted.iter().enumerate() {
        let at = parent.children().item(i as u32);
        if at.as_ref() != Some(child) {
            let _ = parent.insert_before(child, at.as_ref().map(|e| e.as_ref()));
        }
    }
    while parent.children().length() > wanted.len() as u32 {
        match parent.last_element_child() {
            Some(last) => last.remove(),
            None => break,
        }
    }
}

/// Sets an element's text only if it differs (no needless DOM mutation).
pub fn set_text_of(element: &Element, text: &str) {
    if element.text_content().as_deref() != Some(text) {
        element.set_text_content(Some(text));
    }
}

/// Tells the person, through the page's polite live region `#announce`, about a change they did
/// not make (a request arriving, a grant ending). The text replaces the region's previous text,
/// so a screen reader speaks it once. What ended or locked is also shown ([`notice`]).
pub fn announce(text: &str) {
    if let Some(region) = by_id("announce") {
        region.set_text_content(Some(text));
    }
}

/// Shows `text` in the notice at the top of the screen (`#notice`, made on first use): what
/// changed and why, for a person who does not hear `#announce`. It stays until the person
/// dismisses it (its button) or the next notice replaces it; it is not a live region itself, so
/// a screen reader hears the news once, from `#announce`.
pub fn notice(text: &str) {
    let box_ = match by_id("notice") {
        Some(existing) => existing,
        None => {
            let Some(app) = by_id("app") else {
                return;
            };
            let box_ = el("div", "notice", "");
            attr(&box_, "id", "notice");
            let words = el("p", "notice-text", "");
            attr(&words, "id", "notice-text");
            let _ = box_.append_child(&words);
            let dismiss = el("button", "notice-dismiss", "Dismiss");
            attr(&dismiss, "type", "button");
            attr(&dismiss, "id", "notice-dismiss");
            let close = wasm_bindgen::closure::Closure::<dyn FnMut()>::new(|| {
                show("notice", false);
            });
            let _ = dismiss.add_event_listener_with_callback(
                "click",
                wasm_bindgen::JsCast::unchecked_ref(close.as_ref()),
            );
            // One listener for the page's life: the notice is made once.
            close.forget();
            let _ = box_.append_child(&dismiss);
            // Last in the page, so it adds no Tab stop before what waits; drawn over the top
            // of the screen (the cards' decision bar keeps the bottom), so it is seen wherever
            // the page is scrolled.
            let _ = app.append_child(&box_);
            box_
        }
    };
    if let Some(words) = by_id("notice-text") {
        words.set_text_content(Some(text));
    }
    let _ = box_.remove_attribute("hidden");
}

/// Offers `bytes` to the person as a file named `name` (a download; nothing is uploaded).
pub fn download(bytes: &[u8], name: &str, mime: &str) {
    let array = js_sys::Uint8Array::from(bytes);
    let parts = js_sys::Array::of1(&array);
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &options) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    let anchor = el("a", "", "");
    attr(&anchor, "href", &url);
    attr(&anchor, "download", name);
    if let Some(a) = anchor.dyn_ref::<HtmlElement>() {
        a.click();
    }
    let _ = web_sys::Url::revoke_object_url(&url);
}
