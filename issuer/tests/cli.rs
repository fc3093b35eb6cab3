//! The `tacit-issuer` binary: keygen, rotate and seed against a temp dir, and a served batch
//! from a seeded code over a real socket.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

use tacit_issuer::{KeyStore, issuer_metadata};
use tacit_protocol::oid4vci::CredentialOffer;
use tacit_protocol::request_auth::EnrolmentCode;
use wallet_core::Timestamp;

fn issuer(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tacit-issuer"))
        .args(args)
        .arg("--key-file")
        .arg(dir.join("issuer.key"))
        .arg("--database")
        .arg(dir.join("issuer.db"))
        .env_remove("DATABASE_URL")
        .env("TACIT_ISSUER_LOG", "warn")
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A multi-threaded runtime, and the database in `dir` the binary wrote, opened on it.
fn open_db(dir: &Path) -> (tokio::runtime::Runtime, tacit_issuer::IssuerDb) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let url = tacit_store::sqlite_url(&dir.join("issuer.db"));
    let db = rt.block_on(tacit_issuer::IssuerDb::open(&url)).unwrap();
    (rt, db)
}

/// Redeems `code` with a fresh nonce at `now` and commits a one-credential batch; the person
/// it was for.
async fn redeem_and_commit(
    db: &tacit_issuer::IssuerDb,
    code: &EnrolmentCode,
    now: Timestamp,
) -> tacit_issuer::Person {
    let (nonce, _) = db.make_nonce(now).await.unwrap();
    let redemption = db
        .redeem(&nonce, tacit_issuer::Grant::Code(code), now)
        .await
        .unwrap();
    let person = redemption.person.clone();
    redemption
        .commit(now, 1, Timestamp::from_millis(now.millis() + 1))
        .await
        .unwrap();
    person
}

#[test]
fn keygen_writes_a_private_file_and_refuses_to_overwrite_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = issuer(dir.path(), &["keygen"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let key_file = dir.path().join("issuer.key");
    let mode = std::fs::metadata(&key_file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let store = KeyStore::load(&key_file).unwrap();
    assert!(text(&out.stdout).contains(store.active_kid()));
    // The secret is not printed, nor in Debug output.
    let secret = hex::encode(store.signing_key().to_bytes());
    assert!(!text(&out.stdout).contains(&secret) && !text(&out.stderr).contains(&secret));
    assert!(!format!("{store:?}").contains(&secret));
    // A second keygen refuses; --force replaces.
    let again = issuer(dir.path(), &["keygen"]);
    assert!(!again.status.success());
    assert!(
        text(&again.stderr).contains("already exists"),
        "{}",
        text(&again.stderr)
    );
    assert_eq!(
        KeyStore::load(&key_file).unwrap().active_kid(),
        store.active_kid()
    );
    let forced = issuer(dir.path(), &["keygen", "--force"]);
    assert!(forced.status.success());
    assert_ne!(
        KeyStore::load(&key_file).unwrap().active_kid(),
        store.active_kid()
    );
}

#[test]
fn a_key_file_others_can_read_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    assert!(issuer(dir.path(), &["keygen"]).status.success());
    let key_file = dir.path().join("issuer.key");
    for mode in [0o644, 0o640, 0o604] {
        std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(mode)).unwrap();
        let err = KeyStore::load(&key_file).unwrap_err();
        assert!(
            err.to_string().contains("readable by group or others"),
            "{err}"
        );
        let out = issuer(dir.path(), &["rotate"]);
        assert!(!out.status.success());
        assert!(
            text(&out.stderr).contains("chmod 600"),
            "{}",
            text(&out.stderr)
        );
    }
    // A missing file names the command that makes one.
    let out = issuer(&dir.path().join("nowhere"), &["rotate"]);
    assert!(
        text(&out.stderr).contains("tacit-issuer keygen"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn malformed_key_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("issuer.key");
    assert!(issuer(dir.path(), &["keygen"]).status.success());
    let good = std::fs::read_to_string(&key_file).unwrap();
    let value: serde_json::Value = serde_json::from_str(&good).unwrap();
    let mut wrong_kid = value.clone();
    wrong_kid["active"]["kid"] = serde_json::json!("someone-else");
    let mut upper = value.clone();
    upper["active"]["secret_key"] = serde_json::json!(
        value["active"]["secret_key"]
            .as_str()
            .unwrap()
            .to_uppercase()
    );
    let mut extra = value.clone();
    extra["note"] = serde_json::json!("x");
    let mut format = value;
    format["format"] = serde_json::json!("tacit-signer-key/v1");
    for bad in [wrong_kid, upper, extra, format] {
        std::fs::remove_file(&key_file).unwrap();
        let mut options = std::fs::OpenOptions::new();
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options
            .write(true)
            .create_new(true)
            .open(&key_file)
            .unwrap();
        std::io::Write::write_all(&mut file, bad.to_string().as_bytes()).unwrap();
        drop(file);
        let err = KeyStore::load(&key_file).unwrap_err();
        assert!(
            err.to_string()
                .contains("not a valid tacit-issuer key file"),
            "{err}"
        );
    }
}

#[test]
fn rotate_keeps_the_old_key_published() {
    let dir = tempfile::tempdir().unwrap();
    assert!(issuer(dir.path(), &["keygen"]).status.success());
    let key_file = dir.path().join("issuer.key");
    let first = KeyStore::load(&key_file).unwrap();
    let out = issuer(dir.path(), &["rotate"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let second = KeyStore::load(&key_file).unwrap();
    assert_ne!(second.active_kid(), first.active_kid());
    assert!(text(&out.stdout).contains(first.active_kid()));
    assert!(text(&out.stdout).contains(second.active_kid()));
    assert_eq!(second.retired().len(), 1);
    assert_eq!(second.retired()[0].kid, first.active_kid());
    let mode = std::fs::metadata(&key_file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert!(issuer(dir.path(), &["rotate"]).status.success());
    let third = KeyStore::load(&key_file).unwrap();
    let meta = issuer_metadata("http://127.0.0.1:8791", &third).unwrap();
    let kids: Vec<&str> = meta.jwks.keys().iter().map(|k| k.kid.as_str()).collect();
    assert_eq!(
        kids,
        [third.active_kid(), second.active_kid(), first.active_kid()]
    );
    // The directory holds no leftover temp file.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["issuer.key"]);
}

#[test]
fn seed_prints_one_working_code_per_person() {
    let dir = tempfile::tempdir().unwrap();
    let out = issuer(dir.path(), &["seed"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    let mut codes = Vec::new();
    let mut pre_authorized = Vec::new();
    for line in &lines {
        let [code, name, offer] = line.split('\t').collect::<Vec<_>>()[..] else {
            panic!("not code, name and offer: {line}");
        };
        assert!(name.ends_with("Demo"), "{line}");
        let code = EnrolmentCode::parse(code).unwrap();
        // The offer names this issuer and carries a pre-authorized code, never the code the
        // person types: whoever sees the offer alone cannot redeem it.
        let offer = CredentialOffer::parse(offer).unwrap();
        assert_eq!(offer.credential_issuer, "http://127.0.0.1:8791");
        assert_eq!(offer.credential_configuration_ids, ["income"]);
        assert!(!offer.to_json().contains(&code.canonical().replace('-', "")));
        assert!(!offer.to_json().contains(code.canonical()));
        assert_eq!(offer.tx_code.length, Some(16));
        pre_authorized.push(offer.pre_authorized_code);
        codes.push(code);
    }
    pre_authorized.sort();
    pre_authorized.dedup();
    assert_eq!(pre_authorized.len(), 3);
    // The codes are stored only as hashes.
    let db = std::fs::read(dir.path().join("issuer.db")).unwrap();
    let wal = std::fs::read(dir.path().join("issuer.db-wal")).unwrap_or_default();
    for code in &codes {
        let needle = code.canonical().as_bytes();
        let compact = code.canonical().replace('-', "");
        for bytes in [&db, &wal] {
            assert!(!bytes.windows(needle.len()).any(|w| w == needle));
            assert!(
                !bytes
                    .windows(compact.len())
                    .any(|w| w == compact.as_bytes())
            );
        }
    }
    let more = issuer(dir.path(), &["seed", "--count", "5"]);
    assert_eq!(text(&more.stdout).lines().count(), 5);

    // Each code redeems once against the same database.
    let (rt, db) = open_db(dir.path());
    rt.block_on(async {
        assert_eq!(db.people_count().await.unwrap(), 8);
        let now = tacit_issuer::system_now();
        for code in &codes {
            let person = redeem_and_commit(&db, code, now).await;
            assert!(person.income_minor.is_some());
            let (nonce, _) = db.make_nonce(now).await.unwrap();
            assert!(matches!(
                db.redeem(&nonce, tacit_issuer::Grant::Code(code), now)
                    .await,
                Err(tacit_issuer::Error::CodeRefused)
            ));
        }
    });
}

/// `codes` seeds the demo people on an empty database, then gives the same people a fresh code
/// each on every run (a demo that restarts prints working codes without growing the table); an
/// earlier code still works until used.
#[test]
fn codes_seed_once_then_give_everyone_a_fresh_code() {
    let dir = tempfile::tempdir().unwrap();
    let parse = |out: &Output| -> Vec<(EnrolmentCode, String)> {
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
            .lines()
            .map(|line| {
                let mut columns = line.split('\t');
                let code = EnrolmentCode::parse(columns.next().unwrap()).unwrap();
                let name = columns.next().unwrap().to_owned();
                CredentialOffer::parse(columns.next().unwrap()).unwrap();
                (code, name)
            })
            .collect()
    };
    let first = parse(&issuer(dir.path(), &["codes"]));
    let second = parse(&issuer(dir.path(), &["codes", "--valid-for", "1h"]));
    let names = |list: &[(EnrolmentCode, String)]| -> Vec<String> {
        list.iter().map(|(_, n)| n.clone()).collect()
    };
    assert_eq!(names(&first), ["Ana Demo", "Ben Demo", "Chloe Demo"]);
    assert_eq!(names(&second), names(&first));
    for ((a, _), (b, _)) in first.iter().zip(&second) {
        assert_ne!(a.canonical(), b.canonical());
    }

    let (rt, db) = open_db(dir.path());
    rt.block_on(async {
        assert_eq!(db.people_count().await.unwrap(), 3);
        let people = db.people().await.unwrap();
        assert_eq!(people[0].income_minor, Some(2_850_000));
        assert_eq!(people[2].birth_date.as_deref(), Some("1958-06-30"));
        let now = tacit_issuer::system_now();
        // Both of Ben's codes work, each once, for Ben.
        for code in [&first[1].0, &second[1].0] {
            let person = redeem_and_commit(&db, code, now).await;
            assert_eq!(person.name, "Ben Demo");
        }
    });
}
