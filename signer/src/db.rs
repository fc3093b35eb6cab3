//! The signer's database: enrolment codes (stored only as hashes), enrolled installs, the
//! requests already seen, and the receipts signed that have not expired (each as its
//! [`wallet_core::revocation_digest`] and the install it was signed for, so that revoking the
//! install revokes them: [`SignerDb::revoked_receipts`]). SQLite by default, PostgreSQL when `DATABASE_URL` says so, through
//! `tacit-store`; several signer instances can share one PostgreSQL.
//!
//! Every rule that can race is decided by the database: a code is consumed by one conditional
//! `UPDATE` whose affected-row count says who won, and a request is new only if its replay
//! token's `INSERT` added a row.

use std::time::Duration;

use tacit_protocol::request_auth::{
    EnrolmentCode, InstallId, InstallKey, Jwk, code_expiry, derive_code_hash, make_enrolment_code,
};
use tacit_service::db::Tables;
use tacit_service::error::Operational;
use tacit_store::Migration;
use tacit_store::sqlx::{self, Row};
use wallet_core::{Hash, RevokedReceipts, Timestamp};

use crate::Error;

/// The signer's migration set.
pub const MIGRATION_SET: &str = "signer";

const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "enrolment codes, installs, seen requests",
        sql: "CREATE TABLE enrolment_codes (
        code_hash TEXT PRIMARY KEY,
        label TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        used_at BIGINT NULL
    );
    CREATE TABLE installs (
        install_id TEXT PRIMARY KEY,
        public_jwk TEXT NOT NULL,
        label TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        revoked_at BIGINT NULL
    );
    CREATE TABLE seen_requests (
        token TEXT PRIMARY KEY,
        expires_at BIGINT NOT NULL
    );
    CREATE INDEX seen_requests_expiry ON seen_requests (expires_at);",
    },
    Migration {
        version: 2,
        name: "signed receipts, for revocation",
        sql: "CREATE TABLE signed_receipts (
        digest TEXT NOT NULL,
        install_id TEXT NOT NULL,
        expires_at BIGINT NOT NULL,
        PRIMARY KEY (digest, install_id)
    );
    CREATE INDEX signed_receipts_install ON signed_receipts (install_id, expires_at);
    CREATE INDEX signed_receipts_expiry ON signed_receipts (expires_at);",
    },
];

/// Longest label `enroll --label` accepts.
pub const MAX_LABEL_CHARS: usize = 100;

/// One enrolled install, as `tacit-signer installs` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallRecord {
    pub install_id: String,
    pub label: String,
    pub created_at: Timestamp,
    pub revoked_at: Option<Timestamp>,
}

/// How an enrolment attempt ended, when the database answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enrolment {
    /// The code was consumed and the install recorded.
    Enrolled,
    /// The code is unknown, already used or expired.
    CodeRefused,
    /// This key is already enrolled (or was, and was revoked); the code was not consumed.
    AlreadyEnrolled,
}

/// The signer's tables on a `tacit-store` database. Cheap to clone.
#[derive(Debug, Clone)]
pub struct SignerDb {
    tables: Tables,
}

impl SignerDb {
    tacit_service::tables_methods!(MIGRATION_SET, MIGRATIONS, Error);

    /// Records a new code (by its hash only) valid from `now` until `expires_at`.
    pub async fn create_code(
        &self,
        code: &EnrolmentCode,
        label: &str,
        now: Timestamp,
        expires_at: Timestamp,
    ) -> Result<(), Error> {
        sqlx::query(
            "INSERT INTO enrolment_codes (code_hash, label, created_at, expires_at, used_at) \
             VALUES ($1, $2, $3, $4, NULL)",
        )
        .bind(hex::encode(derive_code_hash(code)))
        .bind(label)
        .bind(now.millis())
        .bind(expires_at.millis())
        .execute(self.store().pool())
        .await?;
        Ok(())
    }

    /// Consumes `code` and records `key` as an enrolled install, in one transaction: exactly one
    /// of any number of concurrent attempts with one code wins.
    pub async fn enrol(
        &self,
        code: &EnrolmentCode,
        key: &InstallKey,
        now: Timestamp,
    ) -> Result<Enrolment, Error> {
        let id = key.id();
        let jwk = serde_json::to_string(&key.to_jwk()).map_err(|_| Error::InvalidEnrolment)?;
        let mut tx = self.store().begin_write().await?;
        let known = sqlx::query("SELECT 1 FROM installs WHERE install_id = $1")
            .bind(id.as_str())
            .fetch_optional(&mut *tx)
            .await?;
        if known.is_some() {
            return Ok(Enrolment::AlreadyEnrolled);
        }
        let label = sqlx::query(concat!(
            "UPDATE enrolment_codes SET used_at = $1 WHERE code_hash = $2 AND ",
            tacit_protocol::usable_at_1!(),
            " RETURNING label"
        ))
        .bind(now.millis())
        .bind(hex::encode(derive_code_hash(code)))
        .fetch_optional(&mut *tx)
        .await?;
        let Some(label) = label else {
            return Ok(Enrolment::CodeRefused);
        };
        let label: String = label.try_get(0)?;
        let inserted = sqlx::query(
            "INSERT INTO installs (install_id, public_jwk, label, created_at, revoked_at) \
             VALUES ($1, $2, $3, $4, NULL) ON CONFLICT DO NOTHING",
        )
        .bind(id.as_str())
        .bind(jwk)
        .bind(label)
        .bind(now.millis())
        .execute(&mut *tx)
        .await?;
        if inserted.rows_affected() != 1 {
            // Another instance enrolled this key between our check and insert: keep the code.
            return Ok(Enrolment::AlreadyEnrolled);
        }
        tx.commit().await?;
        Ok(Enrolment::Enrolled)
    }

    /// The key of an enrolled install that has not been revoked.
    pub async fn install_key(&self, id: &InstallId) -> Result<Option<InstallKey>, Error> {
        let row = sqlx::query(
            "SELECT public_jwk FROM installs WHERE install_id = $1 AND revoked_at IS NULL",
        )
        .bind(id.as_str())
        .fetch_optional(self.store().pool())
        .await?;
        let Some(row) = row else { return Ok(None) };
        let text: String = row.try_get(0)?;
        // The row was written from a checked key; a row that no longer parses is not trusted.
        let key = serde_json::from_str::<Jwk>(&text)
            .ok()
            .and_then(|jwk| InstallKey::for_install(&jwk, id).ok());
        Ok(key)
    }

    /// Every install, oldest first.
    pub async fn installs(&self) -> Result<Vec<InstallRecord>, Error> {
        let rows = sqlx::query(
            "SELECT install_id, label, created_at, revoked_at FROM installs \
             ORDER BY created_at, install_id",
        )
        .fetch_all(self.store().pool())
        .await?;
        rows.iter()
            .map(|row| {
                Ok(InstallRecord {
                    install_id: row.try_get(0)?,
                    label: row.try_get(1)?,
                    created_at: Timestamp::from_millis(row.try_get(2)?),
                    revoked_at: row
                        .try_get::<Option<i64>, _>(3)?
                        .map(Timestamp::from_millis),
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(Error::from)
    }

    /// Revokes an install; `false` when there is no such install or it already was revoked.
    pub async fn revoke_install(&self, id: &str, now: Timestamp) -> Result<bool, Error> {
        let done = sqlx::query(
            "UPDATE installs SET revoked_at = $1 WHERE install_id = $2 AND revoked_at IS NULL",
        )
        .bind(now.millis())
        .bind(id)
        .execute(self.store().pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Records that a receipt with `digest` ([`wallet_core::revocation_digest`]) was signed for
    /// `install`, valid until `expires_at`. Kept until it expires, then purged with the replay
    /// tokens. A receipt is handed out only once this returned `Ok`, so revoking the install
    /// always finds it.
    pub async fn record_receipt(
        &self,
        install: &InstallId,
        digest: &Hash,
        expires_at: Timestamp,
    ) -> Result<(), Error> {
        sqlx::query(
            "INSERT INTO signed_receipts (digest, install_id, expires_at) VALUES ($1, $2, $3) \
             ON CONFLICT DO NOTHING",
        )
        .bind(digest.to_hex())
        .bind(install.as_str())
        .bind(expires_at.millis())
        .execute(self.store().pool())
        .await?;
        Ok(())
    }

    /// The digests of the receipts signed for revoked installs that have not expired by `now`:
    /// what `GET /v1/keys` publishes as `revoked_receipts`. Read at publication time, so a
    /// receipt recorded just after (or while) its install was revoked is in the list too.
    pub async fn revoked_receipts(&self, now: Timestamp) -> Result<RevokedReceipts, Error> {
        let rows = sqlx::query(
            "SELECT DISTINCT r.digest FROM signed_receipts r \
             JOIN installs i ON i.install_id = r.install_id \
             WHERE i.revoked_at IS NOT NULL AND r.expires_at > $1",
        )
        .bind(now.millis())
        .fetch_all(self.store().pool())
        .await?;
        let mut digests = Vec::with_capacity(rows.len());
        for row in &rows {
            let text: String = row.try_get(0)?;
            // Written from a Hash; a row that no longer parses is skipped, loudly.
            match Hash::from_hex(&text) {
                Some(digest) => digests.push(digest),
                None => tracing::warn!("a recorded receipt digest does not parse; skipped"),
            }
        }
        Ok(RevokedReceipts::new(digests))
    }

    /// Deletes the records of receipts expired by `now`; returns how many.
    pub async fn purge_receipts(&self, now: Timestamp) -> Result<u64, Error> {
        let done = sqlx::query("DELETE FROM signed_receipts WHERE expires_at <= $1")
            .bind(now.millis())
            .execute(self.store().pool())
            .await?;
        Ok(done.rows_affected())
    }

    /// How many signed receipts are recorded (for tests and operators).
    pub async fn receipt_count(&self) -> Result<i64, Error> {
        let row = sqlx::query("SELECT COUNT(*) FROM signed_receipts")
            .fetch_one(self.store().pool())
            .await?;
        Ok(row.try_get(0)?)
    }

    /// Records a request's replay token, kept until `keep_until`
    /// ([`tacit_protocol::request_auth::RequestAuth::replay_keep_until`]); `false` when it was
    /// already there (a replay). Purges expired tokens and receipt records now and then.
    pub async fn remember_request(
        &self,
        token: &[u8; 32],
        keep_until: Timestamp,
        now: Timestamp,
    ) -> Result<bool, Error> {
        self.take_request(token, keep_until, None, now).await
    }

    /// [`Self::remember_request`], and when the token is new and `receipt` is given, also
    /// [`Self::record_receipt`] for it, in the same transaction: the write a signing request
    /// makes, as one job of the database's group commit ([`tacit_store::group`]), so one
    /// `fsync` covers a batch of requests. Answered only after the commit: a token reported new
    /// is stored, and a receipt about to be handed out is recorded for revocation.
    pub async fn take_request(
        &self,
        token: &[u8; 32],
        keep_until: Timestamp,
        receipt: Option<(&InstallId, &Hash, Timestamp)>,
        now: Timestamp,
    ) -> Result<bool, Error> {
        let job = TakeRequest {
            token: hex::encode(token),
            keep_until: keep_until.millis(),
            receipt: receipt.map(|(install, digest, expires_at)| {
                (
                    digest.to_hex(),
                    install.as_str().to_owned(),
                    expires_at.millis(),
                )
            }),
        };
        let fresh = self.store().write(job).await?;
        // Through the same writer: on SQLite an autocommitted DELETE beside it would contend
        // for the one write lock (and wait in the busy handler's sleeps).
        if fresh
            && self.tables.purge_due()
            && let Err(error) = self.store().write(Purge { now: now.millis() }).await
        {
            tracing::warn!(%error, "could not purge expired replay tokens and receipt records");
        }
        Ok(fresh)
    }

    /// Deletes replay tokens whose requests are stale by `now`; returns how many.
    pub async fn purge_seen(&self, now: Timestamp) -> Result<u64, Error> {
        let done = sqlx::query("DELETE FROM seen_requests WHERE expires_at < $1")
            .bind(now.millis())
            .execute(self.store().pool())
            .await?;
        Ok(done.rows_affected())
    }

    /// How many replay tokens are stored (for tests and operators).
    pub async fn seen_count(&self) -> Result<i64, Error> {
        let row = sqlx::query("SELECT COUNT(*) FROM seen_requests")
            .fetch_one(self.store().pool())
            .await?;
        Ok(row.try_get(0)?)
    }
}

/// The write of one signing request: its replay token, and the receipt record when the token is
/// new. Safe to run again after a failed run: the token is then already there and nothing more
/// is written (the caller is told "replayed", and refuses).
struct TakeRequest {
    token: String,
    keep_until: i64,
    /// `(digest, install id, expires at)`.
    receipt: Option<(String, String, i64)>,
}

impl tacit_store::WriteJob for TakeRequest {
    type Output = bool;

    fn run<'c>(
        &'c mut self,
        conn: &'c mut sqlx::AnyConnection,
    ) -> tacit_store::JobFuture<'c, bool> {
        Box::pin(async move {
            let done = sqlx::query(
                "INSERT INTO seen_requests (token, expires_at) VALUES ($1, $2) \
                 ON CONFLICT DO NOTHING",
            )
            .bind(self.token.as_str())
            .bind(self.keep_until)
            .execute(&mut *conn)
            .await?;
            let fresh = done.rows_affected() == 1;
            if fresh && let Some((digest, install, expires_at)) = &self.receipt {
                sqlx::query(
                    "INSERT INTO signed_receipts (digest, install_id, expires_at) \
                     VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                )
                .bind(digest.as_str())
                .bind(install.as_str())
                .bind(*expires_at)
                .execute(&mut *conn)
                .await?;
            }
            Ok(fresh)
        })
    }
}

/// The purge of expired replay tokens and receipt records, as a group-commit job (deleting what
/// is expired is safe to repeat).
struct Purge {
    now: i64,
}

impl tacit_store::WriteJob for Purge {
    type Output = ();

    fn run<'c>(&'c mut self, conn: &'c mut sqlx::AnyConnection) -> tacit_store::JobFuture<'c, ()> {
        Box::pin(async move {
            sqlx::query("DELETE FROM seen_requests WHERE expires_at < $1")
                .bind(self.now)
                .execute(&mut *conn)
                .await?;
            sqlx::query("DELETE FROM signed_receipts WHERE expires_at <= $1")
                .bind(self.now)
                .execute(&mut *conn)
                .await?;
            Ok(())
        })
    }
}

/// `tacit-signer enroll`: makes a one-time code from the operating system's generator, valid for
/// `valid_for` from `now`, and records its hash. The code itself is returned, never stored.
pub async fn enrol_code(
    db: &SignerDb,
    label: &str,
    valid_for: Duration,
    now: Timestamp,
) -> Result<EnrolmentCode, Error> {
    if label.chars().count() > MAX_LABEL_CHARS || label.chars().any(char::is_control) {
        return Err(Operational::Config(format!(
            "the label must be at most {MAX_LABEL_CHARS} characters, without control characters"
        ))
        .into());
    }
    let expires_at = code_expiry(now, valid_for).map_err(|e| Operational::Config(e.to_string()))?;
    let mut random = [0u8; 10];
    getrandom::fill(&mut random).map_err(|_| Operational::Random)?;
    let code = make_enrolment_code(random);
    db.create_code(&code, label, now, expires_at).await?;
    Ok(code)
}
