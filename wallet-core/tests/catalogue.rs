//! The claim catalogue ([`ClaimKind`]) is complete: it lists exactly the kinds [`Claim`]
//! accepts, each kind's attribute is an [`Attribute`], and the form's fields are exactly the
//! attributes' form fields. A kind added to [`Claim`] but not to the catalogue fails here.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;

use serde_json::json;
use wallet_core::form::Control;
use wallet_core::{Attribute, Claim, ClaimKind, Field};

/// The kinds serde names when asked for one that does not exist: the list the derive on
/// [`Claim`] knows, independent of the catalogue.
fn kinds_claim_accepts() -> Vec<String> {
    let err = serde_json::from_value::<Claim>(json!({ "kind": "no_such_kind" }))
        .unwrap_err()
        .to_string();
    let list = err
        .split("expected one of ")
        .nth(1)
        .unwrap_or_else(|| panic!("unexpected serde message: {err}"));
    list.split(", ")
        .map(|k| k.trim_matches(|c: char| c == '`' || c.is_whitespace()))
        .map(|k| k.split('`').next().unwrap_or(k).to_owned())
        .collect()
}

#[test]
fn catalogue_lists_exactly_the_kinds_claim_accepts() {
    let accepted = kinds_claim_accepts();
    let listed: Vec<String> = ClaimKind::ALL.iter().map(|k| k.name().to_owned()).collect();
    assert_eq!(accepted, listed);
}

#[test]
fn kind_names_round_trip_and_are_distinct() {
    let names: BTreeSet<&str> = ClaimKind::ALL.iter().map(|k| k.name()).collect();
    assert_eq!(names.len(), ClaimKind::ALL.len());
    for kind in ClaimKind::ALL {
        assert_eq!(ClaimKind::parse(kind.name()), Some(kind));
        assert_eq!(serde_json::to_value(kind).unwrap(), json!(kind.name()));
        assert!(kind.shape().contains(&format!("kind:'{}'", kind.name())));
        assert!(ClaimKind::shapes_prose().contains(kind.shape()));
    }
    assert_eq!(ClaimKind::parse("income"), None);
}

#[test]
fn every_kinds_attribute_is_listed_and_every_attribute_has_a_kind() {
    for kind in ClaimKind::ALL {
        assert!(Attribute::ALL.contains(&kind.attribute()), "{kind}");
    }
    for attribute in Attribute::ALL {
        assert!(
            ClaimKind::ALL.iter().any(|k| k.attribute() == attribute),
            "{attribute:?} has no claim kind"
        );
    }
}

#[test]
fn form_is_exactly_the_attributes_fields_each_with_an_element() {
    let from_attributes: Vec<Field> = Attribute::ALL
        .iter()
        .flat_map(|a| a.form_fields().iter().copied())
        .collect();
    assert_eq!(from_attributes, Field::FORM.to_vec());
    for field in Field::FORM {
        assert!(
            field.input_id().is_some_and(|id| id.starts_with("f-")),
            "{field}"
        );
    }
    for attribute in Attribute::ALL {
        assert!(attribute.form_fields().contains(&attribute.raw_field()));
        assert_eq!(
            attribute.raw_getter(),
            format!("get_{}", attribute.raw_field().name())
        );
    }
}

#[test]
fn a_claim_reports_its_catalogue_entry() {
    // Every kind's own example deserialises (through the validating constructors), reports its
    // kind, survives a JSON round trip and its canonical text.
    for kind in ClaimKind::ALL {
        let claim: Claim = serde_json::from_str(kind.example()).unwrap();
        assert_eq!(claim.claim_kind(), kind, "{}", kind.example());
        let again: Claim = serde_json::from_value(json!(claim)).unwrap();
        assert_eq!(again, claim);
        assert_eq!(Claim::parse_canonical(&claim.canonical()).unwrap(), claim);
        assert!(kind.shape().contains(&format!("kind:'{}'", kind.name())));
    }
    let names: std::collections::BTreeSet<&str> = ClaimKind::ALL.map(ClaimKind::name).into();
    assert_eq!(names.len(), ClaimKind::ALL.len());
    assert_eq!(
        ClaimKind::parse("income_below"),
        Some(ClaimKind::IncomeBelow)
    );
}

/// The wallet page draws its form from [`Field::FORM`]: every field there has an element id, a
/// label and a control it can be drawn with, and a field added for a new claim kind fails here
/// until it has all three. Ids and labels are distinct (a label names one field), a choice or a
/// list of checks has options with distinct codes, and a choice's default is one of them.
#[test]
fn every_form_field_can_be_drawn() {
    let mut ids = BTreeSet::new();
    let mut labels = BTreeSet::new();
    for field in Field::FORM {
        let id = field
            .input_id()
            .unwrap_or_else(|| panic!("{field} has no id"));
        assert!(ids.insert(id), "two fields are {id}");
        assert!(!field.label().trim().is_empty(), "{field} has no label");
        assert!(
            labels.insert(field.label()),
            "two fields say {}",
            field.label()
        );
        let options = match field.control() {
            None => panic!("{field} has no control"),
            Some(Control::Amount { placeholder }) => {
                assert!(!placeholder.is_empty(), "{field}");
                continue;
            }
            Some(Control::Date) => continue,
            Some(Control::Choice {
                options,
                prompt,
                default,
            }) => {
                assert!(!prompt.is_empty(), "{field}");
                if let Some(default) = default {
                    assert!(options.iter().any(|o| o.code == default), "{field}");
                }
                options
            }
            Some(Control::Checks(options)) => options,
        };
        assert!(!options.is_empty(), "{field} offers nothing");
        let codes: BTreeSet<&str> = options.iter().map(|o| o.code).collect();
        assert_eq!(codes.len(), options.len(), "{field} repeats a code");
        assert!(
            options
                .iter()
                .all(|o| !o.code.is_empty() && !o.label.is_empty())
        );
    }
    // What the form does not show has neither an element nor a control.
    let hidden = Field::PreferredLanguage;
    assert!(!Field::FORM.contains(&hidden));
    assert_eq!((hidden.input_id(), hidden.control()), (None, None));
    // The page holds the container the form is drawn into.
    let page = include_str!("../../web/static/index.html");
    assert!(page.contains("id=\"facts-fields\""), "no form container");
}
