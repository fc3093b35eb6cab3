//! The issuer's records on a `tacit-store` database (SQLite by default, PostgreSQL via
//! `DATABASE_URL`): the people it vouches for, their one-time enrolment codes and refresh tokens
//! (both stored only as hashes), the nonces it handed out, and a log of issued batches (counts
//! only: holder keys are not kept, so the issuer cannot recognise a presentation later).
//!
//! **Issuance is kept by day only.** Every time written about a person's batch — when it was
//! issued, when its refresh token was made and used, when the code or nonce was used — is
//! midnight UTC of that day ([`issuance_day_ms`]), the same value as the credentials' `iat`. A
//! site sees a presentation's time; with a refresh stored to the millisecond the issuer could
//! match it to the person (a wallet refills right after presenting).
//!
//! **Revocation** ([`IssuerDb::revoke`]): each person has a refresh *chain* number; every code
//! and refresh token carries the chain it was made on, and a batch redeems only on the person's
//! current chain. `revoke` moves the person to a new chain, so every code and refresh token
//! handed out before it — including one a batch still in flight is about to hand out — is
//! refused as [`Error::Revoked`]. A code made afterwards (`tacit-issuer codes`) starts anew.
//!
//! **Status list** ([`Redemption::status_indexes`], [`IssuerDb::revoked_indexes`]): each
//! credential takes an entry of the issuer's Token Status List drawn at random, in the batch's
//! transaction, and the issuer alone knows whose it is; `revoke` also sets every entry of the
//! person, so their credentials already issued are refused by sites that read the list.
//!
//! Every rule that can race is decided by the database: a nonce, a code and a refresh token are
//! each consumed by one conditional `UPDATE` whose affected-row count says who won, all inside
//! one write transaction that commits only once the batch is signed.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use tacit_protocol::request_auth::{
    EnrolmentCode, code_expiry, derive_code_hash, make_enrolment_code,
};
use tacit_service::db::Tables;
use tacit_service::error::Operational;
use tacit_store::Migration;
use tacit_store::sqlx::{self, Any, Row, Transaction};
use wallet_core::Timestamp;

use crate::Error;

/// The issuer's migration set.
pub const MIGRATION_SET: &str = "issuer";

const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "people, enrolment codes, nonces, refresh tokens, issued batches",
        sql: "CREATE TABLE people (
        person_id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        income_minor BIGINT NULL,
        currency TEXT NULL,
        birth_date TEXT NULL,
        created_at BIGINT NOT NULL
    );
    CREATE TABLE enrolment_codes (
        code_hash TEXT PRIMARY KEY,
        person_id TEXT NOT NULL REFERENCES people (person_id),
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        used_at BIGINT NULL
    );
    CREATE TABLE nonces (
        nonce TEXT PRIMARY KEY,
        issued_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        used_at BIGINT NULL
    );
    CREATE INDEX nonces_expiry ON nonces (expires_at);
    CREATE TABLE refresh_tokens (
        token_hash TEXT PRIMARY KEY,
        person_id TEXT NOT NULL REFERENCES people (person_id),
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        used_at BIGINT NULL
    );
    CREATE TABLE issued (
        batch_id TEXT PRIMARY KEY,
        person_id TEXT NOT NULL REFERENCES people (person_id),
        issued_at BIGINT NOT NULL,
        credentials BIGINT NOT NULL,
        expires_at BIGINT NOT NULL
    );",
    },
    Migration {
        version: 2,
        name: "issuance kept by day only; refresh chains that can be revoked",
        sql: "UPDATE issued SET issued_at = issued_at - (issued_at % 86400000);
    UPDATE refresh_tokens SET created_at = created_at - (created_at % 86400000),
        used_at = used_at - (used_at % 86400000);
    UPDATE enrolment_codes SET used_at = used_at - (used_at % 86400000);
    UPDATE nonces SET used_at = used_at - (used_at % 86400000);
    ALTER TABLE people ADD COLUMN chain BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE refresh_tokens ADD COLUMN chain BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE enrolment_codes ADD COLUMN chain BIGINT NOT NULL DEFAULT 0;",
    },
    Migration {
        version: 3,
        name: "status list entries: a random index per credential, set when revoked",
        sql: "CREATE TABLE status_entries (
        idx BIGINT PRIMARY KEY,
        person_id TEXT NOT NULL REFERENCES people (person_id),
        issued_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        status BIGINT NOT NULL DEFAULT 0
    );
    CREATE INDEX status_entries_person ON status_entries (person_id);",
    },
    Migration {
        version: 4,
        name: "OpenID4VCI: a pre-authorized code beside each enrolment code; access tokens",
        sql: "ALTER TABLE enrolment_codes ADD COLUMN offer_hash TEXT NULL;
    CREATE TABLE access_tokens (
        token_hash TEXT PRIMARY KEY,
        person_id TEXT NOT NULL REFERENCES people (person_id),
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        used_at BIGINT NULL,
        chain BIGINT NOT NULL
    );
    CREATE INDEX access_tokens_expiry ON access_tokens (expires_at);",
    },
];

/// How many entries the issuer's status list has (16 KiB of one-bit entries). Each credential
/// takes one at random; an entry is free again once its credential has expired.
pub const STATUS_LIST_ENTRIES: u64 = 1 << 17;

/// How many random draws a credential's index may take before the list counts as full.
const STATUS_DRAWS: usize = 64;

pub use tacit_protocol::issuance::claims::issuance_day_ms;
pub use tacit_protocol::issuance::{
    DEFAULT_CODE_VALIDITY_MS, NONCE_VALIDITY_MS, REFRESH_VALIDITY_MS,
};
pub use tacit_protocol::oid4vci::ACCESS_TOKEN_VALIDITY_MS;

/// Midnight UTC of the day of `now`: how the issuer records any time tied to a person's batch.
fn day_of(now: Timestamp) -> i64 {
    issuance_day_ms(now.millis())
}

/// One person's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    pub person_id: String,
    pub name: String,
    /// Annual income in hundredths of `currency`.
    pub income_minor: Option<i64>,
    pub currency: Option<String>,
    /// `YYYY-MM-DD`.
    pub birth_date: Option<String>,
}

/// What a batch request redeems.
#[derive(Debug, Clone, Copy)]
pub enum Grant<'a> {
    /// A one-time enrolment code (the first batch).
    Code(&'a EnrolmentCode),
    /// A refresh token handed out with an earlier batch.
    RefreshToken(&'a str),
    /// An OpenID4VCI access token from the token endpoint ([`IssuerDb::token`]).
    AccessToken(&'a str),
}

/// What the OpenID4VCI token endpoint redeems.
#[derive(Debug, Clone, Copy)]
pub enum TokenGrant<'a> {
    /// A credential offer's pre-authorized code with its transaction code (the enrolment code
    /// made with it).
    PreAuthorized {
        pre_authorized_code: &'a str,
        tx_code: &'a EnrolmentCode,
    },
    /// A refresh token from an earlier token answer (or batch).
    Refresh(&'a str),
}

/// A one-time enrolment code and the pre-authorized code of its credential offer: redeemed
/// together at the token endpoint, or the code alone at `POST /v1/credentials`.
#[derive(Debug, Clone)]
pub struct Enrolment {
    pub code: EnrolmentCode,
    pub pre_authorized_code: String,
}

/// The issuer's tables. Cheap to clone.
#[derive(Debug, Clone)]
pub struct IssuerDb {
    /// Counts nonces, to purge expired ones now and then.
    tables: Tables,
}

/// A redemption in progress: nonce and grant consumed inside an open transaction. Nothing is
/// consumed unless [`Redemption::commit`] runs; dropping it rolls back.
#[derive(Debug)]
pub struct Redemption {
    tx: Transaction<'static, Any>,
    /// The person the grant belongs to.
    pub person: Person,
    /// The refresh chain the grant was on (the next refresh token continues it).
    chain: i64,
    /// Whether the batch hands out the next refresh token.
    refresh: bool,
}

/// The SHA-256 of a refresh token, access token or pre-authorized code, as stored.
fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// 32 random bytes as base64url (43 characters, [`tacit_protocol::issuance::token_shaped`]).
pub fn random_token() -> Result<String, Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|_| Operational::Random)?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

impl IssuerDb {
    tacit_service::tables_methods!(MIGRATION_SET, MIGRATIONS, Error);

    /// Adds a person.
    pub async fn add_person(&self, person: &Person, now: Timestamp) -> Result<(), Error> {
        sqlx::query(
            "INSERT INTO people (person_id, name, income_minor, currency, birth_date, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(person.person_id.as_str())
        .bind(person.name.as_str())
        .bind(person.income_minor)
        .bind(person.currency.as_deref())
        .bind(person.birth_date.as_deref())
        .bind(now.millis())
        .execute(self.store().pool())
        .await?;
        Ok(())
    }

    /// Makes a one-time enrolment code for `person_id` and the pre-authorized code of its
    /// credential offer, valid until `expires_at`, and stores their hashes. The codes themselves
    /// are returned, never stored.
    pub async fn make_code(
        &self,
        person_id: &str,
        now: Timestamp,
        expires_at: Timestamp,
    ) -> Result<Enrolment, Error> {
        let mut random = [0u8; 10];
        getrandom::fill(&mut random).map_err(|_| Operational::Random)?;
        let code = make_enrolment_code(random);
        let pre_authorized_code = random_token()?;
        let made = sqlx::query(
            "INSERT INTO enrolment_codes (code_hash, person_id, created_at, expires_at, used_at, \
             chain, offer_hash) \
             SELECT $1, person_id, $3, $4, NULL, chain, $5 FROM people WHERE person_id = $2",
        )
        .bind(hex::encode(derive_code_hash(&code)))
        .bind(person_id)
        .bind(now.millis())
        .bind(expires_at.millis())
        .bind(token_hash(&pre_authorized_code))
        .execute(self.store().pool())
        .await?;
        if made.rows_affected() != 1 {
            return Err(Error::UnknownPerson);
        }
        Ok(Enrolment {
            code,
            pre_authorized_code,
        })
    }

    /// Hands out a fresh nonce, valid for [`NONCE_VALIDITY_MS`]. Purges expired ones now and
    /// then. Returns the nonce and its expiry.
    pub async fn make_nonce(&self, now: Timestamp) -> Result<(String, Timestamp), Error> {
        let nonce = random_token()?;
        let expires_at = now.plus_millis(NONCE_VALIDITY_MS);
        sqlx::query(
            "INSERT INTO nonces (nonce, issued_at, expires_at, used_at) VALUES ($1, $2, $3, NULL)",
        )
        .bind(nonce.as_str())
        .bind(now.millis())
        .bind(expires_at.millis())
        .execute(self.store().pool())
        .await?;
        if self.tables.purge_due()
            && let Err(error) = self.purge_nonces(now).await
        {
            tracing::warn!(%error, "could not purge expired nonces");
        }
        Ok((nonce, expires_at))
    }

    /// Deletes nonces that expired before `now`; returns how many.
    pub async fn purge_nonces(&self, now: Timestamp) -> Result<u64, Error> {
        let done = sqlx::query("DELETE FROM nonces WHERE expires_at < $1")
            .bind(now.millis())
            .execute(self.store().pool())
            .await?;
        Ok(done.rows_affected())
    }

    /// Consumes `nonce` and the grant in one write transaction and loads the person. Refusals:
    /// [`Error::NonceRefused`], [`Error::CodeRefused`], [`Error::RefreshRefused`],
    /// [`Error::AccessTokenRefused`], and [`Error::Revoked`] for a grant of a chain
    /// [`IssuerDb::revoke`] ended; on any refusal nothing is consumed. What is written is the
    /// day, never the instant.
    pub async fn redeem(
        &self,
        nonce: &str,
        grant: Grant<'_>,
        now: Timestamp,
    ) -> Result<Redemption, Error> {
        let mut tx = self.store().begin_write().await?;
        let nonce_taken = sqlx::query(concat!(
            "UPDATE nonces SET used_at = $3 WHERE nonce = $2 AND ",
            tacit_protocol::usable_at_1!()
        ))
        .bind(now.millis())
        .bind(nonce)
        .bind(day_of(now))
        .execute(&mut *tx)
        .await?;
        if nonce_taken.rows_affected() != 1 {
            return Err(Error::NonceRefused);
        }
        let (take, refresh) = match grant {
            Grant::Code(code) => (Take::Code(code, None), true),
            Grant::RefreshToken(token) => (Take::Refresh(token), true),
            Grant::AccessToken(token) => (Take::Access(token), false),
        };
        let (person_id, chain) = take_grant(&mut tx, take, now).await?;
        let row = sqlx::query(
            "SELECT person_id, name, income_minor, currency, birth_date FROM people \
             WHERE person_id = $1",
        )
        .bind(person_id.as_str())
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(Error::NoRecord)?;
        let person = Person {
            person_id: row.try_get(0)?,
            name: row.try_get(1)?,
            income_minor: row.try_get(2)?,
            currency: row.try_get(3)?,
            birth_date: row.try_get(4)?,
        };
        Ok(Redemption {
            tx,
            person,
            chain,
            refresh,
        })
    }

    /// The OpenID4VCI token endpoint: consumes the grant and hands out a single-use access token
    /// (valid [`ACCESS_TOKEN_VALIDITY_MS`]) and a refresh token on the same chain, in one write
    /// transaction. Refusals as [`IssuerDb::redeem`]'s ([`Error::CodeRefused`] for a
    /// pre-authorized code and transaction code that are not one usable pair); nothing is
    /// consumed by a refusal. Returns (access token, refresh token); only their hashes are kept.
    pub async fn token(
        &self,
        grant: TokenGrant<'_>,
        now: Timestamp,
    ) -> Result<(String, String), Error> {
        let mut tx = self.store().begin_write().await?;
        let take = match grant {
            TokenGrant::PreAuthorized {
                pre_authorized_code,
                tx_code,
            } => Take::Code(tx_code, Some(pre_authorized_code)),
            TokenGrant::Refresh(token) => Take::Refresh(token),
        };
        let (person_id, chain) = take_grant(&mut tx, take, now).await?;
        let access = random_token()?;
        sqlx::query(
            "INSERT INTO access_tokens \
             (token_hash, person_id, created_at, expires_at, used_at, chain) \
             VALUES ($1, $2, $3, $4, NULL, $5)",
        )
        .bind(token_hash(&access))
        .bind(person_id.as_str())
        .bind(day_of(now))
        .bind(now.plus_millis(ACCESS_TOKEN_VALIDITY_MS).millis())
        .bind(chain)
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM access_tokens WHERE expires_at < $1")
            .bind(now.millis())
            .execute(&mut *tx)
            .await?;
        let refresh = insert_refresh(&mut tx, &person_id, chain, now).await?;
        tx.commit().await?;
        Ok((access, refresh))
    }

    /// The person `who` names: their id, or else their name when exactly one person has it.
    /// [`Error::UnknownPerson`] or [`Error::AmbiguousPerson`] otherwise.
    pub async fn find_person(&self, who: &str) -> Result<Person, Error> {
        let people = self.people().await?;
        if let Some(person) = people.iter().find(|p| p.person_id == who) {
            return Ok(person.clone());
        }
        let mut named = people.into_iter().filter(|p| p.name == who);
        match (named.next(), named.next()) {
            (Some(person), None) => Ok(person),
            (Some(_), Some(_)) => Err(Error::AmbiguousPerson),
            (None, _) => Err(Error::UnknownPerson),
        }
    }

    /// `tacit-issuer revoke`: ends `person_id`'s refresh chain. Every refresh token and
    /// enrolment code handed out to them so far is refused from now on ([`Error::Revoked`]),
    /// including the token of a batch being signed right now; a code made later starts a new
    /// chain. Returns how many refresh tokens and codes were still usable (now ended).
    pub async fn revoke(&self, person_id: &str, now: Timestamp) -> Result<u64, Error> {
        let mut tx = self.store().begin_write().await?;
        let mut live = 0;
        for sql in [
            concat!(
                "SELECT COUNT(*) FROM refresh_tokens WHERE person_id = $2 AND ",
                tacit_protocol::usable_at_1!()
            ),
            concat!(
                "SELECT COUNT(*) FROM enrolment_codes WHERE person_id = $2 AND ",
                tacit_protocol::usable_at_1!()
            ),
            concat!(
                "SELECT COUNT(*) FROM access_tokens WHERE person_id = $2 AND ",
                tacit_protocol::usable_at_1!()
            ),
        ] {
            let row = sqlx::query(sql)
                .bind(now.millis())
                .bind(person_id)
                .fetch_one(&mut *tx)
                .await?;
            live += u64::try_from(row.try_get::<i64, _>(0)?).unwrap_or(0);
        }
        let moved = sqlx::query("UPDATE people SET chain = chain + 1 WHERE person_id = $1")
            .bind(person_id)
            .execute(&mut *tx)
            .await?;
        if moved.rows_affected() != 1 {
            return Err(Error::UnknownPerson);
        }
        // Every credential already issued to them is revoked in the status list too.
        sqlx::query("UPDATE status_entries SET status = 1 WHERE person_id = $1")
            .bind(person_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(live)
    }

    /// The entries of the status list that are revoked now: the indexes of every unexpired
    /// credential of a revoked person.
    pub async fn revoked_indexes(&self) -> Result<Vec<u64>, Error> {
        let rows = sqlx::query("SELECT idx FROM status_entries WHERE status <> 0")
            .fetch_all(self.store().pool())
            .await?;
        rows.iter()
            .map(|row| Ok(u64::try_from(row.try_get::<i64, _>(0)?).unwrap_or(u64::MAX)))
            .collect()
    }

    /// Everyone on record, oldest first (then by name).
    pub async fn people(&self) -> Result<Vec<Person>, Error> {
        let rows = sqlx::query(
            "SELECT person_id, name, income_minor, currency, birth_date FROM people \
             ORDER BY created_at, name, person_id",
        )
        .fetch_all(self.store().pool())
        .await?;
        rows.iter()
            .map(|row| {
                Ok(Person {
                    person_id: row.try_get(0)?,
                    name: row.try_get(1)?,
                    income_minor: row.try_get(2)?,
                    currency: row.try_get(3)?,
                    birth_date: row.try_get(4)?,
                })
            })
            .collect()
    }

    /// How many people are on record.
    pub async fn people_count(&self) -> Result<i64, Error> {
        let row = sqlx::query("SELECT COUNT(*) FROM people")
            .fetch_one(self.store().pool())
            .await?;
        Ok(row.try_get(0)?)
    }

    /// How many batches were issued (for tests and operators).
    pub async fn issued_count(&self) -> Result<i64, Error> {
        let row = sqlx::query("SELECT COUNT(*) FROM issued")
            .fetch_one(self.store().pool())
            .await?;
        Ok(row.try_get(0)?)
    }
}

/// A single-use grant to take.
#[derive(Clone, Copy)]
enum Take<'a> {
    /// An enrolment code, with the pre-authorized code of its offer when redeemed through the
    /// token endpoint.
    Code(&'a EnrolmentCode, Option<&'a str>),
    Refresh(&'a str),
    Access(&'a str),
}

/// Takes a grant inside `tx`: only while usable and on the person's current chain (a grant of an
/// ended chain is told so, used or not; anything else is refused). Returns (person, chain).
async fn take_grant(
    tx: &mut Transaction<'static, Any>,
    take: Take<'_>,
    now: Timestamp,
) -> Result<(String, i64), Error> {
    macro_rules! take {
        ($table:literal, $key:literal, $extra:literal) => {
            (
                concat!(
                    "UPDATE ",
                    $table,
                    " SET used_at = $3 WHERE ",
                    $key,
                    " = $2 AND ",
                    tacit_protocol::usable_at_1!(),
                    $extra,
                    " AND chain = (SELECT p.chain FROM people p WHERE p.person_id = ",
                    $table,
                    ".person_id) RETURNING person_id, chain"
                ),
                concat!(
                    "SELECT COUNT(*) FROM ",
                    $table,
                    " g JOIN people p ON p.person_id = g.person_id WHERE g.",
                    $key,
                    " = $1 AND g.chain <> p.chain"
                ),
            )
        };
    }
    let ((take_sql, revoked_sql), hash, offer, refused) = match take {
        Take::Code(code, None) => (
            take!("enrolment_codes", "code_hash", ""),
            hex::encode(derive_code_hash(code)),
            None,
            Error::CodeRefused,
        ),
        Take::Code(code, Some(offer)) => (
            take!("enrolment_codes", "code_hash", " AND offer_hash = $4"),
            hex::encode(derive_code_hash(code)),
            Some(token_hash(offer)),
            Error::CodeRefused,
        ),
        Take::Refresh(token) => (
            take!("refresh_tokens", "token_hash", ""),
            token_hash(token),
            None,
            Error::RefreshRefused,
        ),
        Take::Access(token) => (
            take!("access_tokens", "token_hash", ""),
            token_hash(token),
            None,
            Error::AccessTokenRefused,
        ),
    };
    let mut query = sqlx::query(take_sql)
        .bind(now.millis())
        .bind(hash.as_str())
        .bind(day_of(now));
    if let Some(offer) = offer {
        query = query.bind(offer);
    }
    let Some(taken) = query.fetch_optional(&mut **tx).await? else {
        let revoked = sqlx::query(revoked_sql)
            .bind(hash.as_str())
            .fetch_one(&mut **tx)
            .await?
            .try_get::<i64, _>(0)?;
        return Err(if revoked > 0 { Error::Revoked } else { refused });
    };
    Ok((taken.try_get(0)?, taken.try_get(1)?))
}

/// Stores a new refresh token for `person_id` on `chain` (only its hash; times by the day) and
/// returns it.
async fn insert_refresh(
    tx: &mut Transaction<'static, Any>,
    person_id: &str,
    chain: i64,
    now: Timestamp,
) -> Result<String, Error> {
    let refresh = random_token()?;
    let day = day_of(now);
    sqlx::query(
        "INSERT INTO refresh_tokens \
         (token_hash, person_id, created_at, expires_at, used_at, chain) \
         VALUES ($1, $2, $3, $4, NULL, $5)",
    )
    .bind(token_hash(&refresh))
    .bind(person_id)
    .bind(day)
    .bind(day.saturating_add(REFRESH_VALIDITY_MS))
    .bind(chain)
    .execute(&mut **tx)
    .await?;
    Ok(refresh)
}

impl Redemption {
    /// Takes `count` free entries of the status list for the batch being signed, each drawn at
    /// random (`draw` gives a random number), in the redemption's transaction: they are kept
    /// only if the batch commits. An entry whose credential expired before `now` is free again.
    /// [`Operational::Config`] when the list is full.
    pub async fn status_indexes(
        &mut self,
        count: usize,
        now: Timestamp,
        expires_at: Timestamp,
        mut draw: impl FnMut() -> Result<u64, Error>,
    ) -> Result<Vec<u64>, Error> {
        sqlx::query("DELETE FROM status_entries WHERE expires_at < $1")
            .bind(now.millis())
            .execute(&mut *self.tx)
            .await?;
        let mut taken = Vec::with_capacity(count);
        for _ in 0..count {
            let mut found = None;
            for _ in 0..STATUS_DRAWS {
                let idx = draw()? % STATUS_LIST_ENTRIES;
                let inserted = sqlx::query(
                    "INSERT INTO status_entries (idx, person_id, issued_at, expires_at, status) \
                     VALUES ($1, $2, $3, $4, 0) ON CONFLICT (idx) DO NOTHING",
                )
                .bind(i64::try_from(idx).unwrap_or(i64::MAX))
                .bind(self.person.person_id.as_str())
                .bind(day_of(now))
                .bind(expires_at.millis())
                .execute(&mut *self.tx)
                .await?;
                if inserted.rows_affected() == 1 {
                    found = Some(idx);
                    break;
                }
            }
            taken.push(found.ok_or_else(|| {
                Operational::Config("the status list is full: no free entry found".into())
            })?);
        }
        Ok(taken)
    }

    /// Records the batch and, for a code or refresh token redeemed at `POST /v1/credentials`, a
    /// new refresh token on the same chain (returned; only its hash is stored), then commits:
    /// from here on the nonce and the grant are used. Every time written is the day of `now`
    /// (the token's expiry counts from it). An access token's batch hands out no refresh token
    /// (the token endpoint did).
    pub async fn commit(
        mut self,
        now: Timestamp,
        credentials: usize,
        expires_at: Timestamp,
    ) -> Result<Option<String>, Error> {
        let refresh = if self.refresh {
            Some(insert_refresh(&mut self.tx, &self.person.person_id, self.chain, now).await?)
        } else {
            None
        };
        let day = day_of(now);
        sqlx::query(
            "INSERT INTO issued (batch_id, person_id, issued_at, credentials, expires_at) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(random_token()?)
        .bind(self.person.person_id.as_str())
        .bind(day)
        .bind(i64::try_from(credentials).unwrap_or(i64::MAX))
        .bind(expires_at.millis())
        .execute(&mut *self.tx)
        .await?;
        self.tx.commit().await?;
        Ok(refresh)
    }
}

/// The demo people `tacit-issuer seed` adds: (name, income in cents, currency, birth date).
pub const DEMO_PEOPLE: &[(&str, i64, &str, &str)] = &[
    ("Ana Demo", 2_850_000, "EUR", "1990-04-12"),
    ("Ben Demo", 7_200_000, "EUR", "2008-09-01"),
    ("Chloe Demo", 1_500_000, "EUR", "1958-06-30"),
];

/// When a code made at `now`, valid for `valid_for_ms`, expires: within the bounds every
/// enrolment code keeps ([`tacit_protocol::request_auth::code_expiry`]).
fn code_expires_at(now: Timestamp, valid_for_ms: i64) -> Result<Timestamp, Error> {
    let valid_for = Duration::from_millis(u64::try_from(valid_for_ms).unwrap_or(0));
    code_expiry(now, valid_for).map_err(|e| Operational::Config(e.to_string()).into())
}

/// `tacit-issuer seed`: adds the first `count` demo people (cycling through [`DEMO_PEOPLE`])
/// with fresh ids, and a one-time code each valid for `valid_for_ms`. Returns (person, code).
pub async fn seed(
    db: &IssuerDb,
    count: usize,
    valid_for_ms: i64,
    now: Timestamp,
) -> Result<Vec<(Person, Enrolment)>, Error> {
    let expires_at = code_expires_at(now, valid_for_ms)?;
    let mut out = Vec::with_capacity(count);
    for (name, income_minor, currency, birth_date) in DEMO_PEOPLE.iter().cycle().take(count) {
        let mut id = [0u8; 16];
        getrandom::fill(&mut id).map_err(|_| Operational::Random)?;
        let person = Person {
            person_id: hex::encode(id),
            name: (*name).to_owned(),
            income_minor: Some(*income_minor),
            currency: Some((*currency).to_owned()),
            birth_date: Some((*birth_date).to_owned()),
        };
        db.add_person(&person, now).await?;
        let code = db.make_code(&person.person_id, now, expires_at).await?;
        out.push((person, code));
    }
    Ok(out)
}

/// `tacit-issuer codes`: a fresh one-time code, valid for `valid_for_ms`, for everyone on
/// record (earlier codes stay valid until used or expired); on an empty database, seeds the
/// three demo people first ([`seed`]). Returns (person, code), oldest person first.
pub async fn fresh_codes(
    db: &IssuerDb,
    valid_for_ms: i64,
    now: Timestamp,
) -> Result<Vec<(Person, Enrolment)>, Error> {
    let people = db.people().await?;
    if people.is_empty() {
        return seed(db, DEMO_PEOPLE.len(), valid_for_ms, now).await;
    }
    let expires_at = code_expires_at(now, valid_for_ms)?;
    let mut out = Vec::with_capacity(people.len());
    for person in people {
        let code = db.make_code(&person.person_id, now, expires_at).await?;
        out.push((person, code));
    }
    Ok(out)
}

/// `tacit-issuer revoke <person>`: ends the refresh chain of the person `who` names (their id,
/// or their name when nobody else has it; [`IssuerDb::find_person`]) at `now`. Returns the
/// person and how many refresh tokens and codes were still usable.
pub async fn revoke(db: &IssuerDb, who: &str, now: Timestamp) -> Result<(Person, u64), Error> {
    let person = db.find_person(who).await?;
    let ended = db.revoke(&person.person_id, now).await?;
    Ok((person, ended))
}
