//! A WebSocket and its handlers, for the pages that talk over `tacit-relay` (the vault's links
//! and the bridge, issue 29): binary messages arrive as bytes, text as a string. Dropping a
//! [`Socket`] detaches its handlers and closes it; the handlers themselves are freed a moment
//! later, never while one of them runs (a handler may drop its own socket).

use js_sys::Uint8Array;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{BinaryType, MessageEvent, WebSocket};

struct Handlers {
    _open: Closure<dyn FnMut()>,
    _message: Closure<dyn FnMut(MessageEvent)>,
    _close: Closure<dyn FnMut()>,
}

/// See the module docs.
pub struct Socket {
    ws: WebSocket,
    handlers: Option<Handlers>,
}

impl core::fmt::Debug for Socket {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Socket")
            .field("url", &self.ws.url())
            .finish()
    }
}

impl Socket {
    /// Opens `url`; `on_open` when connected, `on_text` / `on_binary` per message, `on_close`
    /// when it closes (not after it was dropped).
    pub fn open(
        url: &str,
        on_open: impl FnMut() + 'static,
        mut on_text: impl FnMut(String) + 'static,
        mut on_binary: impl FnMut(Vec<u8>) + 'static,
        on_close: impl FnMut() + 'static,
    ) -> Result<Self, JsValue> {
        let ws = WebSocket::new(url)?;
        ws.set_binary_type(BinaryType::Arraybuffer);
        let open = Closure::<dyn FnMut()>::new(on_open);
        let message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            let data = e.data();
            if let Some(text) = data.as_string() {
                on_text(text);
            } else if let Ok(buffer) = data.dyn_into::<js_sys::ArrayBuffer>() {
                on_binary(Uint8Array::new(&buffer).to_vec());
            }
        });
        let close = Closure::<dyn FnMut()>::new(on_close);
        ws.set_onopen(Some(open.as_ref().unchecked_ref()));
        ws.set_onmessage(Some(message.as_ref().unchecked_ref()));
        ws.set_onclose(Some(close.as_ref().unchecked_ref()));
        Ok(Self {
            ws,
            handlers: Some(Handlers {
                _open: open,
                _message: message,
                _close: close,
            }),
        })
    }

    /// Sends `bytes` as one binary message; whether the socket took it.
    pub fn send(&self, bytes: &[u8]) -> bool {
        self.ws.send_with_u8_array(bytes).is_ok()
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        self.ws.set_onopen(None);
        self.ws.set_onmessage(None);
        self.ws.set_onclose(None);
        let _ = self.ws.close();
        if let Some(handlers) = self.handlers.take() {
            let free = Closure::once_into_js(move || drop(handlers));
            if let Some(window) = web_sys::window() {
                let _ = window
                    .set_timeout_with_callback_and_timeout_and_arguments_0(free.unchecked_ref(), 0);
            }
        }
    }
}
