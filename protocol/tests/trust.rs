//! The trust rules of a site's configuration (`tacit_protocol::trust`): key sources, trusted
//! issuer entries, duplicates.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use tacit_protocol::trust::*;
use wallet_core::{Attribute, Origin};

fn origin(text: &str) -> Origin {
    Origin::parse(text).unwrap()
}

#[test]
fn keys_come_from_exactly_one_place_and_a_url_is_http() {
    assert_eq!(
        key_source::<&str>(Some("http://127.0.0.1:8787/v1/keys"), None),
        Ok(KeySource::Url("http://127.0.0.1:8787/v1/keys".into()))
    );
    assert_eq!(
        key_source::<&str>(Some("https://signer.example/v1/keys"), None),
        Ok(KeySource::Url("https://signer.example/v1/keys".into()))
    );
    assert_eq!(
        key_source(None, Some("keys.json")),
        Ok(KeySource::Pinned("keys.json"))
    );
    // Plain http only to this machine; https anywhere.
    for ok in [
        "http://localhost:8787/v1/keys",
        "http://LOCALHOST/v1/keys",
        "http://127.0.0.1/v1/keys",
        "http://127.8.9.10:1/k",
        "http://[::1]:8787/v1/keys",
        "http://127.0.0.1:8787?x=1",
        "https://192.0.2.1/v1/keys",
    ] {
        assert!(key_source::<&str>(Some(ok), None).is_ok(), "{ok:?}");
    }
    for off in [
        "http://192.0.2.1:8787/v1/keys",
        "http://10.0.0.1/keys",
        "http://signer.example/v1/keys",
        "http://localhost.evil.example/keys",
        "http://127.0.0.1.nip.io/keys",
        "http://[::2]/keys",
        "http://[::ffff:127.0.0.1]/keys",
        "http://0.0.0.0/keys",
    ] {
        assert_eq!(
            key_source::<&str>(Some(off), None),
            Err(KeySourceError::PlainHttpOffLoopback),
            "{off:?}"
        );
    }
    // User information names another host than it seems to; a bad port is no URL.
    for bad in [
        "http://127.0.0.1@evil.example/keys",
        "http://evil.example@127.0.0.1/keys",
        "http://127.0.0.1:80x/keys",
        "http:///keys",
        "https:///keys",
        "http://[::1/keys",
    ] {
        assert_eq!(
            key_source::<&str>(Some(bad), None),
            Err(KeySourceError::NotHttp),
            "{bad:?}"
        );
    }
    assert!(
        KeySourceError::PlainHttpOffLoopback
            .to_string()
            .starts_with("keys_url over plain http:// must point at this machine"),
        "the sentence names the setting"
    );
    for bad in [
        "file:///etc/keys",
        "/etc/keys",
        "ftp://x",
        "HTTP://x",
        " http://x",
        "httpx://x",
        "http:/x",
        "",
    ] {
        assert_eq!(
            key_source::<&str>(Some(bad), None),
            Err(KeySourceError::NotHttp),
            "{bad:?}"
        );
    }
    assert_eq!(
        key_source(Some("http://x"), Some("k.json")),
        Err(KeySourceError::NotExactlyOne)
    );
    assert_eq!(
        key_source::<&str>(None, None),
        Err(KeySourceError::NotExactlyOne)
    );
    assert_eq!(
        KeySourceError::NotExactlyOne.to_string(),
        "needs exactly one of keys_url and pinned_keys"
    );
}

fn entry<'a>(issuer: &'a Origin, name: &'a str) -> IssuerEntry<'a> {
    IssuerEntry {
        issuer,
        name,
        vouches_for: Some(Attribute::Income),
        vct: Some("https://tacit.example/vct/income"),
        keys_url: Some("http://127.0.0.1:8791/.well-known/jwt-vc-issuer"),
        pinned: false,
    }
}

#[test]
fn an_issuer_needs_a_readable_name() {
    let tax = origin("http://127.0.0.1:8791");
    let longest = "x".repeat(MAX_ISSUER_NAME_CHARS);
    let too_long = "x".repeat(MAX_ISSUER_NAME_CHARS + 1);
    // Characters, not bytes: 120 two-byte letters are fine.
    let umlauts = "ä".repeat(MAX_ISSUER_NAME_CHARS);
    for ok in ["Tax Office Nordstadt", "T", &longest, &umlauts] {
        assert_eq!(check_issuer(&entry(&tax, ok)), Ok(()), "{ok}");
    }
    for bad in ["", " ", "\t\n", &too_long] {
        assert_eq!(
            check_issuer(&entry(&tax, bad)),
            Err(IssuerEntryError::Name),
            "{bad:?}"
        );
    }
    assert_eq!(MAX_ISSUER_NAME_CHARS, 120);
}

#[test]
fn an_issuer_vouches_only_for_income_or_age() {
    let tax = origin("http://127.0.0.1:8791");
    for attribute in Attribute::ALL {
        let e = IssuerEntry {
            vouches_for: Some(attribute),
            ..entry(&tax, "Tax")
        };
        let expected = match attribute {
            Attribute::Income | Attribute::Age => Ok(()),
            // Every other attribute, including one added later: refused by default.
            _ => Err(IssuerEntryError::VouchesFor),
        };
        assert_eq!(check_issuer(&e), expected, "{attribute:?}");
        assert_eq!(issuer_may_vouch_for(attribute), expected.is_ok());
    }
}

#[test]
fn an_issuer_entry_names_what_it_vouches_for_and_its_credential_type() {
    let tax = origin("http://127.0.0.1:8791");
    let unscoped = IssuerEntry {
        vouches_for: None,
        ..entry(&tax, "Tax")
    };
    assert_eq!(
        check_issuer(&unscoped),
        Err(IssuerEntryError::VouchesForMissing)
    );
    assert!(
        IssuerEntryError::VouchesForMissing
            .to_string()
            .starts_with("needs vouches_for")
    );
    let longest = "v".repeat(MAX_VCT_CHARS);
    for ok in ["https://tacit.example/vct/income", "urn:eu:pid:1", &longest] {
        let e = IssuerEntry {
            vct: Some(ok),
            ..entry(&tax, "Tax")
        };
        assert_eq!(check_issuer(&e), Ok(()), "{ok}");
    }
    let too_long = "v".repeat(MAX_VCT_CHARS + 1);
    for bad in [
        None,
        Some(""),
        Some("a b"),
        Some("x\n"),
        Some(too_long.as_str()),
    ] {
        let e = IssuerEntry {
            vct: bad,
            ..entry(&tax, "Tax")
        };
        assert_eq!(check_issuer(&e), Err(IssuerEntryError::Vct), "{bad:?}");
    }
    assert!(IssuerEntryError::Vct.to_string().starts_with("needs vct"));
}

#[test]
fn an_issuer_entry_names_one_key_source() {
    let tax = origin("http://127.0.0.1:8791");
    let pinned = IssuerEntry {
        keys_url: None,
        pinned: true,
        ..entry(&tax, "Tax")
    };
    assert_eq!(check_issuer(&pinned), Ok(()));
    let both = IssuerEntry {
        pinned: true,
        ..entry(&tax, "Tax")
    };
    let neither = IssuerEntry {
        keys_url: None,
        ..entry(&tax, "Tax")
    };
    let file = IssuerEntry {
        keys_url: Some("file:///well-known"),
        ..entry(&tax, "Tax")
    };
    assert_eq!(
        check_issuer(&both),
        Err(KeySourceError::NotExactlyOne.into())
    );
    assert_eq!(
        check_issuer(&neither),
        Err(KeySourceError::NotExactlyOne.into())
    );
    assert_eq!(check_issuer(&file), Err(KeySourceError::NotHttp.into()));
}

#[test]
fn each_issuer_is_listed_once() {
    let tax = origin("http://127.0.0.1:8791");
    let registry = origin("http://127.0.0.1:8792");
    let tax_again = origin("http://127.0.0.1:8791");
    assert_eq!(check_issuers(&[]), Ok(()));
    assert_eq!(
        check_issuers(&[entry(&tax, "Tax"), entry(&registry, "Registry")]),
        Ok(())
    );
    // The second entry is the one refused, even when it is stricter.
    let stricter = IssuerEntry {
        vouches_for: Some(Attribute::Income),
        ..entry(&tax_again, "Tax")
    };
    let (who, why) =
        check_issuers(&[entry(&tax, "Tax"), entry(&registry, "Registry"), stricter]).unwrap_err();
    assert_eq!(
        (who.as_str(), why),
        ("http://127.0.0.1:8791", IssuerEntryError::ListedTwice)
    );
    // An entry's own fault is reported with its issuer, before any duplicate.
    let (who, why) = check_issuers(&[entry(&tax, "Tax"), entry(&registry, " ")]).unwrap_err();
    assert_eq!((who, why), (&registry, IssuerEntryError::Name));
    // Different ports are different issuers.
    let other_port = origin("http://127.0.0.1:8793");
    assert_eq!(
        check_issuers(&[entry(&tax, "Tax"), entry(&other_port, "Tax")]),
        Ok(())
    );
}

#[test]
fn an_unknown_key_refetches_at_most_every_ten_seconds() {
    use std::time::Duration;
    assert_eq!(MIN_REFETCH_INTERVAL, Duration::from_secs(10));
    assert_eq!(REFRESH_INTERVAL, Duration::from_secs(300));
    assert!(MIN_REFETCH_INTERVAL < REFRESH_INTERVAL);
    // Never fetched: fetch.
    assert!(may_refetch(None));
    for (since, allowed) in [
        (Duration::ZERO, false),
        (Duration::from_millis(1), false),
        (Duration::from_millis(9_999), false),
        (Duration::from_secs(10), true),
        (Duration::from_secs(11), true),
        (Duration::MAX, true),
    ] {
        assert_eq!(may_refetch(Some(since)), allowed, "{since:?}");
    }
}

#[test]
fn a_receipt_is_judged_with_signer_keys_at_most_ten_seconds_old() {
    use std::time::Duration;
    assert_eq!(MAX_KEY_AGE, Duration::from_secs(10));
    // Revocations must reach a site well inside a receipt's 15-minute window.
    assert!(MAX_KEY_AGE < REFRESH_INTERVAL);
    assert!(needs_fresh_keys(None));
    for (since, fetch) in [
        (Duration::ZERO, false),
        (Duration::from_millis(9_999), false),
        (Duration::from_secs(10), true),
        (Duration::MAX, true),
    ] {
        assert_eq!(needs_fresh_keys(Some(since)), fetch, "{since:?}");
    }
}
