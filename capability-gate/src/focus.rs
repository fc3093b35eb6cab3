//! Where the person's keyboard focus goes once one of their own acts is done (issue 30, item 5).
//!
//! An act often removes or hides the control that started it: the card of a granted request,
//! the form that created the profile, the Stop button of a stopped grant. The browser then puts
//! the focus on the document's body, and the next Tab starts from the top of the page. This is
//! the rule for where it goes instead: what still waits for the person first (a request, then an
//! application), else the control that naturally follows the act. The page applies it only when
//! the act took the focus away (`web/src/focus.rs`), or the act is one of the settings' that
//! is done with its form ([`Act::leaves_its_form`]): otherwise a person whose focus is still on
//! a control keeps it there.
//!
//! Pure: the page reads what it shows ([`Screen`]) and turns the [`Target`] into an element.

/// One of the person's acts that ends with the focus somewhere new.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    /// A new profile was made (the creation form is hidden).
    Created,
    /// The wallet was unlocked (the unlock form is hidden).
    Unlocked,
    /// This browser was enrolled with a signer.
    Enrolled,
    /// An office's credential was added.
    CredentialAdded,
    /// A request was granted (its card is gone).
    Granted,
    /// A request was denied (its card is gone).
    Denied,
    /// A grant was stopped (its Stop button is gone).
    Stopped,
    /// An application was sent (its card is gone).
    Released,
    /// An application was not sent (its card is gone).
    NotSent,
    /// The editor of the facts opened.
    EditorOpened,
    /// The session ended and the wallet locked.
    SessionEnded,
}

impl Act {
    /// Whether the focus leaves the act's own form even when it is still on a control there
    /// (the settings' forms stay on the page after their act): an enrolment is done once, so
    /// what comes next is the credentials; a credential added is shown in the list, where the
    /// person reads what was added.
    pub fn leaves_its_form(self) -> bool {
        matches!(self, Act::Enrolled | Act::CredentialAdded)
    }
}

/// What the page shows when the act is done, in the order it shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Screen {
    /// The waiting requests' ids.
    pub requests: Vec<String>,
    /// The waiting applications' ids.
    pub applications: Vec<String>,
    /// The live grants' ids (each has a Stop button).
    pub grants: Vec<String>,
}

/// A fixed place on the page that focus can move to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// The requests and grants region (it says when nothing waits).
    Waiting,
    /// "Export encrypted backup": the creation form asks for a backup once the profile exists.
    Backup,
    /// The office address of Settings → Credentials: enrolment is done, credentials come next.
    CredentialAddress,
    /// The list of credentials, where the one just added is.
    Credentials,
    /// The first field of the facts editor.
    FirstFact,
    /// "What sites were told": the record of what was just sent, and the session's receipts.
    Record,
}

/// Where the focus goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The first control of the waiting request with this id.
    Request(String),
    /// The first control of the waiting application with this id.
    Application(String),
    /// The Stop button of the grant with this id.
    Grant(String),
    /// A fixed place.
    Place(Place),
}

/// Where the focus goes once `act` is done and the page shows `screen`.
pub fn after(act: Act, screen: &Screen) -> Target {
    let waiting = || {
        screen
            .requests
            .first()
            .map(|id| Target::Request(id.clone()))
            .or_else(|| {
                screen
                    .applications
                    .first()
                    .map(|id| Target::Application(id.clone()))
            })
    };
    match act {
        // Settings and the editor: the person is setting up, and stays with it.
        Act::Enrolled => Target::Place(Place::CredentialAddress),
        Act::CredentialAdded => Target::Place(Place::Credentials),
        Act::EditorOpened => Target::Place(Place::FirstFact),
        // The session is over: its receipts are what is left to read (nothing can be answered
        // while locked, so what waits is not first).
        Act::SessionEnded => Target::Place(Place::Record),
        Act::Created => waiting().unwrap_or(Target::Place(Place::Backup)),
        Act::Unlocked | Act::Denied => waiting().unwrap_or(Target::Place(Place::Waiting)),
        // The newest grant is the last one listed: the one just made, to stop it if need be.
        Act::Granted => waiting()
            .or_else(|| screen.grants.last().map(|id| Target::Grant(id.clone())))
            .unwrap_or(Target::Place(Place::Waiting)),
        Act::Stopped => screen
            .grants
            .first()
            .map(|id| Target::Grant(id.clone()))
            .or_else(waiting)
            .unwrap_or(Target::Place(Place::Waiting)),
        // An application decided: the next one first, then a request, then the record.
        Act::Released | Act::NotSent => screen
            .applications
            .first()
            .map(|id| Target::Application(id.clone()))
            .or_else(waiting)
            .unwrap_or(Target::Place(Place::Record)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(requests: &[&str], applications: &[&str], grants: &[&str]) -> Screen {
        let own = |ids: &[&str]| ids.iter().map(|s| (*s).to_owned()).collect();
        Screen {
            requests: own(requests),
            applications: own(applications),
            grants: own(grants),
        }
    }

    #[test]
    fn what_waits_comes_first_after_an_act_that_ends_a_decision() {
        let s = screen(&["r1", "r2"], &["a1"], &["g1"]);
        for act in [Act::Created, Act::Unlocked, Act::Granted, Act::Denied] {
            assert_eq!(after(act, &s), Target::Request("r1".into()), "{act:?}");
        }
        let s = screen(&[], &["a1"], &["g1"]);
        for act in [Act::Created, Act::Unlocked, Act::Granted, Act::Denied] {
            assert_eq!(after(act, &s), Target::Application("a1".into()), "{act:?}");
        }
    }

    #[test]
    fn an_application_decided_leads_to_the_next_application_before_a_request() {
        let s = screen(&["r1"], &["a2"], &[]);
        assert_eq!(after(Act::Released, &s), Target::Application("a2".into()));
        assert_eq!(after(Act::NotSent, &s), Target::Application("a2".into()));
        let s = screen(&["r1"], &[], &[]);
        assert_eq!(after(Act::Released, &s), Target::Request("r1".into()));
        assert_eq!(
            after(Act::NotSent, &Screen::default()),
            Target::Place(Place::Record)
        );
    }

    #[test]
    fn with_nothing_waiting_each_act_has_its_own_next_control() {
        let none = Screen::default();
        for (act, want) in [
            (Act::Created, Place::Backup),
            (Act::Unlocked, Place::Waiting),
            (Act::Denied, Place::Waiting),
            (Act::Granted, Place::Waiting),
            (Act::Stopped, Place::Waiting),
            (Act::Released, Place::Record),
            (Act::Enrolled, Place::CredentialAddress),
            (Act::CredentialAdded, Place::Credentials),
            (Act::EditorOpened, Place::FirstFact),
            (Act::SessionEnded, Place::Record),
        ] {
            assert_eq!(after(act, &none), Target::Place(want), "{act:?}");
        }
    }

    #[test]
    fn a_grant_leads_to_its_stop_button_and_a_stop_to_the_next_one() {
        let s = screen(&[], &[], &["g1", "g2"]);
        assert_eq!(after(Act::Granted, &s), Target::Grant("g2".into()));
        assert_eq!(after(Act::Stopped, &s), Target::Grant("g1".into()));
        // A stop keeps the person among the grants even when something waits.
        let s = screen(&["r1"], &[], &["g1"]);
        assert_eq!(after(Act::Stopped, &s), Target::Grant("g1".into()));
        let s = screen(&["r1"], &[], &[]);
        assert_eq!(after(Act::Stopped, &s), Target::Request("r1".into()));
    }

    #[test]
    fn only_the_settings_acts_move_the_focus_out_of_their_own_form() {
        assert!(Act::Enrolled.leaves_its_form());
        assert!(Act::CredentialAdded.leaves_its_form());
        for act in [Act::Created, Act::Unlocked, Act::Granted, Act::SessionEnded] {
            assert!(!act.leaves_its_form(), "{act:?}");
        }
    }

    #[test]
    fn settings_the_editor_and_the_session_end_ignore_what_waits() {
        let s = screen(&["r1"], &["a1"], &["g1"]);
        assert_eq!(
            after(Act::Enrolled, &s),
            Target::Place(Place::CredentialAddress)
        );
        assert_eq!(
            after(Act::CredentialAdded, &s),
            Target::Place(Place::Credentials)
        );
        assert_eq!(
            after(Act::EditorOpened, &s),
            Target::Place(Place::FirstFact)
        );
        assert_eq!(after(Act::SessionEnded, &s), Target::Place(Place::Record));
    }
}
