//! Which WebMCP the wallet page trusts (`capability_gate::host::Seen::decide`): the browser's own
//! getter over any marker a page script can set, the polyfill only where the page's loader put
//! it, and `window.tacit` offered only where there is no registry.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use capability_gate::host::{Detection, POLYFILL, Seen};
use proptest::prelude::*;

const MARKERS: [Option<&str>; 6] = [
    None,
    Some("native"),
    Some("polyfilled"),
    Some("polyfill-failed"),
    Some("insecure-context"),
    Some("POLYFILLED"),
];

fn seen(has_context: bool, native_getter: bool, marker: Option<&str>) -> Seen<'_> {
    Seen {
        has_context,
        native_getter,
        marker,
        secure: true,
        superseded_api: false,
    }
}

#[test]
fn the_browsers_getter_is_trusted_over_any_marker() {
    use Detection as D;
    let cases = [
        (seen(true, true, None), D::Available),
        (seen(true, true, Some("native")), D::Available),
        // A page script that marks "polyfilled" over native WebMCP gains nothing.
        (seen(true, true, Some("polyfilled")), D::Available),
        (seen(true, false, Some("polyfilled")), D::Polyfilled),
        // A script-made modelContext cannot pass for native, nor for the page's polyfill with
        // another spelling.
        (seen(true, false, Some("native")), D::Scripted),
        (seen(true, false, Some("POLYFILLED")), D::Scripted),
        (seen(true, false, Some("polyfilled ")), D::Scripted),
        (seen(true, false, None), D::Scripted),
        (
            seen(false, false, Some("polyfill-failed")),
            D::PolyfillFailed,
        ),
        // A marker without a modelContext is not WebMCP.
        (seen(false, false, Some("polyfilled")), D::Absent),
        (seen(false, false, Some("native")), D::Absent),
        (seen(false, true, Some("native")), D::Absent),
        (seen(false, false, None), D::Absent),
        // The superseded API, only without document.modelContext.
        (
            Seen {
                superseded_api: true,
                ..seen(false, false, None)
            },
            D::SupersededApi,
        ),
        (
            Seen {
                superseded_api: true,
                ..seen(true, true, None)
            },
            D::Available,
        ),
        (
            Seen {
                superseded_api: true,
                ..seen(false, false, Some("polyfill-failed"))
            },
            D::PolyfillFailed,
        ),
        (
            Seen {
                superseded_api: true,
                secure: false,
                ..seen(false, false, None)
            },
            D::InsecureContext,
        ),
    ];
    for (seen, expected) in cases {
        assert_eq!(seen.decide(), expected, "{seen:?}");
    }
    assert_eq!(
        Detection::decide(false, false, None, false),
        D::InsecureContext
    );
    assert_eq!(
        Detection::decide(true, false, Some("polyfilled"), true),
        D::Polyfilled
    );
}

#[test]
fn window_tacit_is_offered_only_without_a_registry_and_every_code_is_listed() {
    use Detection as D;
    let every = [
        D::Available,
        D::Polyfilled,
        D::Scripted,
        D::Absent,
        D::PolyfillFailed,
        D::InsecureContext,
        D::SupersededApi,
        D::RegistrationRefused("NotAllowedError: no".into()),
    ];
    for d in &every {
        let registry = matches!(d, D::Available | D::Polyfilled | D::Scripted);
        assert_eq!(d.has_registry(), registry, "{d:?}");
        assert!(Detection::CODES.contains(&d.code()), "{d:?}");
        // Without a registry the page says where the tools are instead.
        if matches!(d, D::Absent | D::PolyfillFailed | D::SupersededApi) {
            assert!(d.describe().contains("window.tacit"), "{d:?}");
        }
    }
    let codes: std::collections::BTreeSet<&str> = every.iter().map(Detection::code).collect();
    assert_eq!(codes.len(), Detection::CODES.len());
    let polyfilled = D::Polyfilled.describe();
    assert!(polyfilled.contains(POLYFILL) && polyfilled.contains("consequentialHint"));
    assert!(
        D::RegistrationRefused("NotAllowedError: no".into())
            .describe()
            .ends_with("NotAllowedError: no")
    );
}

proptest! {
    /// Native only with the browser's getter; a registry only where a modelContext exists;
    /// the polyfill only with the loader's exact marker.
    #[test]
    fn what_a_script_can_set_never_makes_native(
        has_context in any::<bool>(),
        native_getter in any::<bool>(),
        marker in prop::sample::select(MARKERS.to_vec()),
        other in "[a-z-]{0,20}",
        use_other in any::<bool>(),
        secure in any::<bool>(),
        superseded_api in any::<bool>(),
    ) {
        let marker = if use_other { Some(other.as_str()) } else { marker };
        let seen = Seen { has_context, native_getter, marker, secure, superseded_api };
        let d = seen.decide();
        prop_assert_eq!(d == Detection::Available, has_context && native_getter);
        prop_assert_eq!(d.has_registry(), has_context);
        if d == Detection::Polyfilled {
            prop_assert!(!native_getter && marker == Some("polyfilled"));
        }
        if !has_context && !secure {
            prop_assert_eq!(d, Detection::InsecureContext);
        }
    }
}
