//! The page's top: starts the app with the features it calls at its moments ([`Features`]),
//! then installs the listeners of `actions`. Nothing below this module reaches it.

use crate::app::{self, App, Features};
use crate::{actions, asker, credentials, dom, person};

/// The features of the wallet page.
struct Page;

impl Features for Page {
    fn changed(&self, app: &mut App) {
        asker::start_new_checks(app);
    }

    fn draw(&self, app: &App) {
        person::render(app);
    }

    fn load_credentials(&self, app: &mut App) {
        credentials::load_into_gate(app);
    }

    fn delete_credentials(&self) {
        wasm_bindgen_futures::spawn_local(async {
            if let Err(e) = credentials::delete_all().await {
                dom::set_msg(
                    "profile-msg",
                    &format!("The credentials and their keys could not all be deleted ({e})."),
                    false,
                );
            }
        });
    }
}

/// Builds the app and wires the page; `adopted` are the boot module's registrations.
pub fn start(adopted: std::collections::BTreeMap<String, web_sys::AbortController>) {
    app::start(&Page, adopted);
    actions::install();
}
