//! Settings: the signer enrolment and the credentials.

use super::*;

/// The Signer setting: where this browser is enrolled, if anywhere.
pub(super) fn settings(view: &View<'_>) {
    let (text, ok, enrolled, origin) = match &view.enrolment {
        Enrolment::Loading => (
            "Reading this browser's enrolment…".to_owned(),
            true,
            "loading",
            DEFAULT_SIGNER.to_owned(),
        ),
        Enrolment::NotEnrolled => (
            "Not enrolled: this browser sends nothing to a signer until you enrol it. Type the \
             one-time enrolment code whoever runs the signer gave you."
                .to_owned(),
            false,
            "false",
            DEFAULT_SIGNER.to_owned(),
        ),
        Enrolment::Enrolled(pin) => (
            format!("{}.", pin.describe()),
            true,
            "true",
            pin.signer.to_string(),
        ),
    };
    dom::set_msg("signer-status", &text, ok);
    if let Some(status) = dom::by_id("signer-status") {
        attr(&status, "data-enrolled", enrolled);
    }
    // Put the pinned signer in the field when the enrolment changes, not while the person types.
    if changed("settings", format!("{enrolled}{origin}")) {
        dom::set_value("signer-origin", &origin);
    }
    if let Some(b) = dom::by_id("enrol-btn") {
        let _ = if view.enrolling {
            b.set_attribute("disabled", "")
        } else {
            b.remove_attribute("disabled")
        };
    }
}

/// Settings → Credentials: one line per issuer, and whether a credential can be added now.
pub(super) fn credentials(view: &View<'_>) {
    let unlocked = view.gate.is_unlocked();
    let summary = if unlocked {
        view.gate.credentials().summary(view.now)
    } else {
        Vec::new()
    };
    if let Some(b) = dom::by_id("add-credential-btn") {
        let _ = if view.fetching_credentials || !unlocked {
            b.set_attribute("disabled", "")
        } else {
            b.remove_attribute("disabled")
        };
    }
    let disagreements = view.gate.disagreements(view.now);
    let lines: Vec<(String, String, usize)> = summary
        .iter()
        .map(|s| {
            let until = match s.valid_until {
                Some(at) => format!("valid until {}", day(at)),
                None => "none valid".to_owned(),
            };
            // Issue 28 item 6: where it answers differently from what the person typed.
            let differs = if disagreements.iter().any(|d| d.issuer == s.origin) {
                " · answers differently from what you typed (open Your profile to see where)"
            } else {
                ""
            };
            (
                s.origin.to_string(),
                format!(
                    "From {} · {until} · {}{differs}",
                    s.name,
                    proofs_left(s.left)
                ),
                s.left,
            )
        })
        .collect();
    if !changed("credentials", format!("{unlocked}{lines:?}")) {
        return;
    }
    let mut rows: Vec<_> = lines
        .into_iter()
        .map(|(origin, text, left)| {
            let item = el("div", "item credential", &text);
            attr(&item, "data-issuer", &origin);
            attr(&item, "data-left", &left.to_string());
            attr(&item, "title", &origin)
        })
        .collect();
    if rows.is_empty() {
        rows.push(empty(if unlocked {
            "No credential yet: every answer is your own word."
        } else {
            "Unlock the wallet to see and add your credentials."
        }));
    }
    fill("credential-list", rows);
}
