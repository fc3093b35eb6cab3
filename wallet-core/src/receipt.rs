//! Session receipts: the payload the signer signs, its canonical signing bytes, and the verifier
//! a relying site runs offline.
//!
//! # The entries are their own chain
//!
//! A receipt carries the session's comparisons *for its audience only*, as a chain of their own:
//! seq 0 upward, the first `prev_hash` is [`Hash::ZERO`], and `log_head` is the last entry's hash
//! ([`Hash::ZERO`] with no entries). Every entry's origin is the audience. A subset of one global
//! log would leak which other sites were asked what; a per-audience chain lets the verifier detect
//! a removed, inserted, reordered or edited entry without seeing anyone else's. `log_head` is
//! signed, so entries cut from the end are detected too.
//!
//! # Signing bytes
//!
//! `b"tacit/receipt/v1\0"`, then these fields, each as a big-endian `u32` length and the bytes:
//! `version` (`u16` BE), `session_id`, `audience`, `nonce`, `issued_at` (`i64` BE), `expires_at`
//! (`i64` BE), `provenance` (text), `log_head` (32 bytes), the number of entries (`u64` BE); then
//! for each entry its [`LogEntry::canonical_bytes`] and its `hash` (32 bytes), each
//! length-prefixed the same way.
//!
//! The signature covers the payload only. `key_id` needs no cover (an Ed25519 signature only
//! verifies under the key that made it) and `signed_at` is informational: the key's validity
//! window is judged at the signed `issued_at` (opened two minutes early for signer clock skew),
//! so a retired key cannot vouch for anything issued after it retired, and a receipt's window
//! is at most 15 minutes ([`MAX_WINDOW_MS`]).
//!
//! # Verification order
//!
//! [`verify`] checks, and fails with a distinct error at the first that does not hold: the key is
//! known and valid at `issued_at` ([`VerifyError::UnknownKey`]); the signature
//! ([`VerifyError::BadSignature`]); the structure and chain ([`VerifyError::Malformed`],
//! [`VerifyError::ChainBroken`]); the audience ([`VerifyError::AudienceMismatch`]); the nonce
//! ([`VerifyError::NonceMismatch`]); the window ([`VerifyError::NotYetValid`],
//! [`VerifyError::Expired`]). [`PublishedKeys::verify`] then checks the signer's revocations
//! ([`VerifyError::Revoked`]).
//!
//! # Revocation
//!
//! A receipt carries no install id (that would link a person across sites). A signer that
//! revokes an install publishes instead, with its keys, the [`revocation_digest`] of every
//! receipt it signed for that install that has not yet expired ([`PublishedKeys`]); a site that
//! fetches the signer's keys refuses a listed receipt. A digest is listed at most until the
//! receipt expires ([`MAX_WINDOW_MS`] after it was issued), after which the window refuses it
//! anyway.

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use subtle::ConstantTimeEq;

use crate::claim::{Claim, Outcome};
use crate::error::{ChainBroken, MalformedReceipt, SignableError, StructureError, VerifyError};
use crate::log::{ComparisonLog, Hash, LogEntry, chain_head, decode_lower_hex, put_field};
use crate::types::{KeyId, Nonce, Origin, SessionId, Timestamp};

/// The only payload version this crate writes or accepts.
pub const RECEIPT_VERSION: u16 = 1;

/// Domain-separation prefix of a payload's signing bytes.
pub const RECEIPT_DOMAIN: &[u8] = b"tacit/receipt/v1\0";

/// Domain-separation prefix for deriving key ids.
pub const KEY_ID_DOMAIN: &[u8] = b"tacit/key-id/v1\0";

/// Largest signed receipt [`SignedReceipt::parse`] reads (1 MiB).
pub const MAX_RECEIPT_BYTES: usize = 1 << 20;

/// Where the answers come from, for the receipt as a whole; each entry says its own
/// ([`LogEntry::issuer`]).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Provenance {
    /// Every answer is the person's own word.
    SelfAsserted,
    /// At least one answer came from an issuer's credential; the entries say which, and the
    /// application carries one SD-JWT presentation per issuer-backed claim.
    IssuerBacked,
}

impl Provenance {
    pub const fn as_str(self) -> &'static str {
        match self {
            Provenance::SelfAsserted => "self_asserted",
            Provenance::IssuerBacked => "issuer_backed",
        }
    }

    /// The provenance `entries` call for: [`Provenance::IssuerBacked`] iff one of them is.
    pub fn of_entries(entries: &[LogEntry]) -> Self {
        if entries.iter().any(LogEntry::is_issuer_backed) {
            Provenance::IssuerBacked
        } else {
            Provenance::SelfAsserted
        }
    }
}

/// How far a receipt's `issued_at` may precede its signing: two minutes.
pub const ISSUE_SKEW_MS: i64 = 2 * 60 * 1000;

/// Longest validity window a receipt may have: 15 minutes. The flow needs seconds (the agent
/// collects the signed receipt and submits it at once); a receipt is a bearer token for its
/// site and nonce, so whatever it proves — even if the install that asked for it is revoked the
/// next minute — it proves no longer than this.
pub const MAX_WINDOW_MS: i64 = 15 * 60 * 1000;

/// What the signer signs: the session's comparisons for one audience, bound to its nonce.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReceiptPayload {
    pub version: u16,
    pub session_id: SessionId,
    pub audience: Origin,
    pub nonce: Nonce,
    pub issued_at: Timestamp,
    pub expires_at: Timestamp,
    pub provenance: Provenance,
    pub log_head: Hash,
    pub entries: Vec<LogEntry>,
}

impl ReceiptPayload {
    /// A payload over `log`, the session's log for `audience`. Refused unless it passes
    /// [`ReceiptPayload::check_structure`].
    pub fn new(
        session_id: SessionId,
        audience: Origin,
        nonce: Nonce,
        issued_at: Timestamp,
        expires_at: Timestamp,
        log: &ComparisonLog,
    ) -> Result<Self, StructureError> {
        Self::from_entries(
            session_id,
            audience,
            nonce,
            issued_at,
            expires_at,
            log.entries().to_vec(),
        )
    }

    /// A payload over `entries`, which must form their own chain from genesis.
    pub fn from_entries(
        session_id: SessionId,
        audience: Origin,
        nonce: Nonce,
        issued_at: Timestamp,
        expires_at: Timestamp,
        entries: Vec<LogEntry>,
    ) -> Result<Self, StructureError> {
        let payload = Self {
            version: RECEIPT_VERSION,
            session_id,
            audience,
            nonce,
            issued_at,
            expires_at,
            provenance: Provenance::of_entries(&entries),
            log_head: chain_head(&entries),
            entries,
        };
        payload.check_structure()?;
        Ok(payload)
    }

    /// Whether a signer may sign this payload at `now` (its clock): the structure holds
    /// ([`ReceiptPayload::check_structure`]), the window has not ended, and `issued_at` is within
    /// [`ISSUE_SKEW_MS`] of `now`.
    pub fn check_signable(&self, now: Timestamp) -> Result<(), SignableError> {
        self.check_structure()?;
        if self.expires_at <= now {
            return Err(SignableError::Expired);
        }
        if self.issued_at.millis().abs_diff(now.millis()) > ISSUE_SKEW_MS.unsigned_abs() {
            return Err(SignableError::IssuedAtOutOfRange);
        }
        Ok(())
    }

    /// The bytes the signature covers (see the module docs).
    pub fn signing_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(512 + self.entries.len() * 320);
        out.extend_from_slice(RECEIPT_DOMAIN);
        put_field(&mut out, &self.version.to_be_bytes());
        put_field(&mut out, self.session_id.as_str().as_bytes());
        put_field(&mut out, self.audience.as_str().as_bytes());
        put_field(&mut out, self.nonce.as_str().as_bytes());
        put_field(&mut out, &self.issued_at.millis().to_be_bytes());
        put_field(&mut out, &self.expires_at.millis().to_be_bytes());
        put_field(&mut out, self.provenance.as_str().as_bytes());
        put_field(&mut out, self.log_head.as_bytes());
        put_field(&mut out, &(self.entries.len() as u64).to_be_bytes());
        for entry in &self.entries {
            put_field(&mut out, &entry.canonical_bytes());
            put_field(&mut out, entry.hash.as_bytes());
        }
        out
    }

    /// Checks what the signature cannot: the version, the entries' chain, that it ends at
    /// `log_head`, that every entry is for the audience, and that the window is not empty.
    ///
    /// A chain fault is [`StructureError::ChainBroken`] (`index` = number of entries when only
    /// the head disagrees); everything else is [`StructureError::Malformed`] with its own reason.
    pub fn check_structure(&self) -> Result<(), StructureError> {
        let bad = |reason| StructureError::Malformed(MalformedReceipt(reason));
        if self.version != RECEIPT_VERSION {
            return Err(bad("unsupported receipt version"));
        }
        crate::log::verify_entries(&self.entries)?;
        if !bool::from(chain_head(&self.entries).ct_eq(&self.log_head)) {
            return Err(ChainBroken {
                index: self.entries.len(),
            }
            .into());
        }
        if self.provenance != Provenance::of_entries(&self.entries) {
            return Err(bad(
                "provenance must be issuer_backed exactly when an entry names an issuer",
            ));
        }
        if self.entries.iter().any(|e| e.origin != self.audience) {
            return Err(bad("an entry's origin is not the receipt's audience"));
        }
        if self.expires_at <= self.issued_at {
            return Err(bad("expires_at must be after issued_at"));
        }
        // Both times come from outside and may be any i64: a subtraction could overflow (a
        // panic with overflow checks, a wrapped negative window that passes without them).
        let window = self.expires_at.millis().abs_diff(self.issued_at.millis());
        if window > MAX_WINDOW_MS.unsigned_abs() {
            return Err(bad("validity window longer than 15 minutes"));
        }
        Ok(())
    }
}

/// A payload with the signer's Ed25519 signature (128 lowercase hex digits).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignedReceipt {
    pub payload: ReceiptPayload,
    pub key_id: KeyId,
    pub signature: String,
    pub signed_at: Timestamp,
}

impl SignedReceipt {
    /// Parses a signed receipt's JSON, refusing unknown fields and invalid field values. Checks
    /// no signature: that is [`verify`]'s job. Never panics.
    pub fn parse(bytes: &[u8]) -> Result<Self, MalformedReceipt> {
        if bytes.len() > MAX_RECEIPT_BYTES {
            return Err(MalformedReceipt("receipt too large"));
        }
        serde_json::from_slice(bytes).map_err(|_| MalformedReceipt("not a valid signed receipt"))
    }
}

/// Whether the signer still signs with a key. Verification ignores it: a retired key keeps
/// verifying what it signed inside its window.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyStatus {
    Active,
    Retired,
}

/// One of the signer's public keys, valid for signatures made in `[not_before, not_after)`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublicKeyEntry {
    pub key_id: KeyId,
    /// 64 lowercase hex digits.
    pub public_key: String,
    pub not_before: Timestamp,
    pub not_after: Option<Timestamp>,
    pub status: KeyStatus,
}

impl PublicKeyEntry {
    /// An entry for `key` with its derived id.
    pub fn new(
        key: &VerifyingKey,
        not_before: Timestamp,
        not_after: Option<Timestamp>,
        status: KeyStatus,
    ) -> Self {
        Self {
            key_id: derive_key_id(key),
            public_key: hex::encode(key.as_bytes()),
            not_before,
            not_after,
            status,
        }
    }

    /// The key, if `public_key` is well-formed and `key_id` is derived from it.
    pub fn verifying_key(&self) -> Option<VerifyingKey> {
        let bytes = decode_lower_hex::<32>(&self.public_key)?;
        let key = VerifyingKey::from_bytes(&bytes).ok()?;
        (derive_key_id(&key) == self.key_id).then_some(key)
    }

    /// Whether a receipt issued at `issued_at` may carry this key's signature: the key's window,
    /// opened [`ISSUE_SKEW_MS`] early because a signer accepts payloads issued up to two minutes
    /// before it signs (a payload issued just before a rotation is signed with the new key).
    pub fn valid_at(&self, issued_at: Timestamp) -> bool {
        self.not_before.plus_millis(-ISSUE_SKEW_MS) <= issued_at
            && self.not_after.is_none_or(|end| issued_at < end)
    }
}

/// The signer's published keys (the `keys` of its `GET /v1/keys`).
///
/// It reads a whole published document and keeps only the keys: the document's
/// `revoked_receipts` are dropped, so a verifier reading a `KeySet` does not honour
/// revocations (the wallet checking the receipt it was just given has no need to). A verifier
/// that must, as a relying site does, reads [`PublishedKeys`].
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, from = "KeyDocument")]
pub struct KeySet {
    pub keys: Vec<PublicKeyEntry>,
}

impl KeySet {
    /// Largest key set [`KeySet::parse`] reads, and what a fetcher may read of one (1 MiB).
    pub const MAX_BYTES: usize = 1 << 20;

    /// Parses a key set's JSON (a published document: its revocations are dropped). Never
    /// panics.
    pub fn parse(bytes: &[u8]) -> Result<Self, MalformedReceipt> {
        if bytes.len() > Self::MAX_BYTES {
            return Err(MalformedReceipt("key set too large"));
        }
        serde_json::from_slice(bytes).map_err(|_| MalformedReceipt("not a valid key set"))
    }

    /// The key named `key_id` that was valid at `at`, if one is listed and well-formed.
    pub fn key_for(&self, key_id: &KeyId, at: Timestamp) -> Option<VerifyingKey> {
        self.keys
            .iter()
            .filter(|k| &k.key_id == key_id && k.valid_at(at))
            .find_map(PublicKeyEntry::verifying_key)
    }
}

impl From<KeyDocument> for KeySet {
    fn from(document: KeyDocument) -> Self {
        Self {
            keys: document.keys,
        }
    }
}

/// Domain-separation prefix of a receipt's revocation digest.
pub const REVOCATION_DOMAIN: &[u8] = b"tacit/receipt-revocation/v1\0";

/// The digest a signer publishes to revoke a receipt: SHA-256 of [`REVOCATION_DOMAIN`] then the
/// payload's [`ReceiptPayload::signing_bytes`]. It names the receipt and nothing else: no
/// install id, so a list of them links nobody to anything a site did not already hold. (Two
/// receipts with one payload share it; only the signer can make a second signature, and it
/// would be over the same content.)
pub fn revocation_digest(payload: &ReceiptPayload) -> Hash {
    let bytes = payload.signing_bytes();
    let mut input = Vec::with_capacity(REVOCATION_DOMAIN.len() + bytes.len());
    input.extend_from_slice(REVOCATION_DOMAIN);
    input.extend_from_slice(&bytes);
    Hash::digest(&input)
}

/// The receipts a signer has revoked, by [`revocation_digest`]: sorted, each once. In JSON an
/// array of 64-hex-digit digests, in any order (read sorted).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct RevokedReceipts(Vec<Hash>);

impl RevokedReceipts {
    /// The list of `digests`, sorted and without repeats.
    pub fn new(digests: impl IntoIterator<Item = Hash>) -> Self {
        let mut digests: Vec<Hash> = digests.into_iter().collect();
        digests.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        digests.dedup();
        Self(digests)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The digests, sorted.
    pub fn digests(&self) -> &[Hash] {
        &self.0
    }

    /// Whether `digest` is listed.
    pub fn contains(&self, digest: &Hash) -> bool {
        self.0
            .binary_search_by(|d| d.as_bytes().cmp(digest.as_bytes()))
            .is_ok()
    }

    /// The rule: a receipt is revoked when its [`revocation_digest`] is listed.
    pub fn revokes(&self, signed: &SignedReceipt) -> bool {
        !self.is_empty() && self.contains(&revocation_digest(&signed.payload))
    }
}

impl<'de> Deserialize<'de> for RevokedReceipts {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<Hash>::deserialize(deserializer).map(Self::new)
    }
}

/// The wire form of a signer's `GET /v1/keys`: its keys and, when there are any, the receipts it
/// revoked (a document without `revoked_receipts`, as signers wrote before revocations, reads
/// as none).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyDocument {
    keys: Vec<PublicKeyEntry>,
    #[serde(default, skip_serializing_if = "RevokedReceipts::is_empty")]
    revoked_receipts: RevokedReceipts,
}

/// What a signer publishes at `GET /v1/keys`: its [`KeySet`] and the receipts it revoked
/// ([`RevokedReceipts`]). A relying site that fetches it judges receipts with
/// [`PublishedKeys::verify`]; one with pinned keys cannot learn of revocations.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "KeyDocument", into = "KeyDocument")]
pub struct PublishedKeys {
    pub key_set: KeySet,
    pub revoked_receipts: RevokedReceipts,
}

impl From<KeyDocument> for PublishedKeys {
    fn from(document: KeyDocument) -> Self {
        Self {
            key_set: KeySet {
                keys: document.keys,
            },
            revoked_receipts: document.revoked_receipts,
        }
    }
}

impl From<PublishedKeys> for KeyDocument {
    fn from(published: PublishedKeys) -> Self {
        Self {
            keys: published.key_set.keys,
            revoked_receipts: published.revoked_receipts,
        }
    }
}

/// Keys without revocations (pinned keys, or a signer that revoked nothing).
impl From<KeySet> for PublishedKeys {
    fn from(key_set: KeySet) -> Self {
        Self {
            key_set,
            revoked_receipts: RevokedReceipts::default(),
        }
    }
}

impl PublishedKeys {
    /// Parses a signer's `GET /v1/keys` body (at most [`KeySet::MAX_BYTES`]). Never panics.
    pub fn parse(bytes: &[u8]) -> Result<Self, MalformedReceipt> {
        if bytes.len() > KeySet::MAX_BYTES {
            return Err(MalformedReceipt("key set too large"));
        }
        serde_json::from_slice(bytes).map_err(|_| MalformedReceipt("not a valid key set"))
    }

    /// [`verify`] against these keys, then the revocations: a receipt that passes every check
    /// but whose digest is listed fails with [`VerifyError::Revoked`] (a forged or altered one
    /// fails as such first).
    pub fn verify(
        &self,
        signed: &SignedReceipt,
        expected_audience: &Origin,
        expected_nonce: &Nonce,
        now: Timestamp,
    ) -> Result<VerifiedReceipt, VerifyError> {
        let verified = verify(
            signed,
            &self.key_set,
            expected_audience,
            expected_nonce,
            now,
        )?;
        if self.revoked_receipts.revokes(signed) {
            return Err(VerifyError::Revoked);
        }
        Ok(verified)
    }
}

/// A key's id: hex of the first 8 bytes of `SHA-256(b"tacit/key-id/v1\0" || public key)`.
#[allow(
    clippy::expect_used,
    reason = "16 lowercase hex digits always match KeyId's charset and length"
)]
pub fn derive_key_id(key: &VerifyingKey) -> KeyId {
    let mut input = Vec::with_capacity(KEY_ID_DOMAIN.len() + 32);
    input.extend_from_slice(KEY_ID_DOMAIN);
    input.extend_from_slice(key.as_bytes());
    let digest = Hash::digest(&input);
    let text = hex::encode(&digest.as_bytes()[..8]);
    KeyId::parse(&text).expect("16 lowercase hex digits are a valid key id")
}

/// Signs `payload` with `key`. Pure: the signer service calls it after its own checks (it should
/// refuse a payload that fails [`ReceiptPayload::check_structure`]; [`verify`] will).
pub fn sign(payload: ReceiptPayload, key: &SigningKey, signed_at: Timestamp) -> SignedReceipt {
    let signature = key.sign(&payload.signing_bytes());
    SignedReceipt {
        key_id: derive_key_id(&key.verifying_key()),
        signature: hex::encode(signature.to_bytes()),
        signed_at,
        payload,
    }
}

/// Verifies a signed receipt for the site `expected_audience`, which issued `expected_nonce`, at
/// `now`. See the module docs for the order of checks; each failure has its own error.
pub fn verify(
    signed: &SignedReceipt,
    keys: &KeySet,
    expected_audience: &Origin,
    expected_nonce: &Nonce,
    now: Timestamp,
) -> Result<VerifiedReceipt, VerifyError> {
    // The key must have been valid when the receipt was issued. `issued_at` is covered by the
    // signature, unlike `signed_at`, so a holder of a retired key cannot backdate with it.
    let key = keys
        .key_for(&signed.key_id, signed.payload.issued_at)
        .ok_or(VerifyError::UnknownKey)?;
    let signature = decode_lower_hex::<64>(&signed.signature)
        .map(|bytes| Signature::from_bytes(&bytes))
        .ok_or(VerifyError::BadSignature)?;
    let payload = &signed.payload;
    key.verify_strict(&payload.signing_bytes(), &signature)
        .map_err(|_| VerifyError::BadSignature)?;
    payload.check_structure()?;
    if &payload.audience != expected_audience {
        return Err(VerifyError::AudienceMismatch);
    }
    let nonce_ok = payload
        .nonce
        .as_str()
        .as_bytes()
        .ct_eq(expected_nonce.as_str().as_bytes());
    if !bool::from(nonce_ok) {
        return Err(VerifyError::NonceMismatch);
    }
    if now < payload.issued_at {
        return Err(VerifyError::NotYetValid);
    }
    if now >= payload.expires_at {
        return Err(VerifyError::Expired);
    }
    Ok(VerifiedReceipt {
        session_id: payload.session_id.clone(),
        audience: payload.audience.clone(),
        nonce: payload.nonce.clone(),
        issued_at: payload.issued_at,
        expires_at: payload.expires_at,
        provenance: payload.provenance,
        log_head: payload.log_head,
        key_id: signed.key_id.clone(),
        signed_at: signed.signed_at,
        answers: payload
            .entries
            .iter()
            .map(|e| (e.claim.clone(), e.outcome))
            .collect(),
        issuers: payload.entries.iter().map(|e| e.issuer.clone()).collect(),
    })
}

/// A receipt that passed [`verify`]. Only `verify` makes one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedReceipt {
    session_id: SessionId,
    audience: Origin,
    nonce: Nonce,
    issued_at: Timestamp,
    expires_at: Timestamp,
    provenance: Provenance,
    log_head: Hash,
    key_id: KeyId,
    signed_at: Timestamp,
    answers: Vec<(Claim, Outcome)>,
    /// Per answer, the issuer whose credential gave it (`None`: the person's word).
    issuers: Vec<Option<Origin>>,
}

impl VerifiedReceipt {
    pub fn session_id(&self) -> &SessionId {
        &self.session_id
    }

    pub fn audience(&self) -> &Origin {
        &self.audience
    }

    pub fn nonce(&self) -> &Nonce {
        &self.nonce
    }

    pub fn issued_at(&self) -> Timestamp {
        self.issued_at
    }

    pub fn expires_at(&self) -> Timestamp {
        self.expires_at
    }

    pub fn provenance(&self) -> Provenance {
        self.provenance
    }

    pub fn log_head(&self) -> Hash {
        self.log_head
    }

    pub fn key_id(&self) -> &KeyId {
        &self.key_id
    }

    pub fn signed_at(&self) -> Timestamp {
        self.signed_at
    }

    /// Every (claim, outcome) in log order.
    pub fn answers(&self) -> &[(Claim, Outcome)] {
        &self.answers
    }

    /// Per answer (same order as [`VerifiedReceipt::answers`]), the issuer whose credential gave
    /// it, or `None` for the person's own word.
    pub fn issuers(&self) -> &[Option<Origin>] {
        &self.issuers
    }

    /// The issuer of the latest answer to `claim`, if that answer is issuer-backed.
    pub fn latest_issuer(&self, claim: &Claim) -> Option<&Origin> {
        self.answers
            .iter()
            .zip(&self.issuers)
            .rev()
            .find(|((c, _), _)| c == claim)
            .and_then(|(_, issuer)| issuer.as_ref())
    }

    /// Whether the receipt shows `claim` satisfied: some entry answers it
    /// [`Outcome::Satisfied`] and none answers it [`Outcome::NotSatisfied`] (contradicting answers
    /// in one session, for example after the profile was edited, do not count as a yes).
    pub fn satisfies(&self, claim: &Claim) -> bool {
        let outcomes = || {
            self.answers
                .iter()
                .filter(move |(c, _)| c == claim)
                .map(|(_, o)| *o)
        };
        outcomes().any(|o| o == Outcome::Satisfied)
            && !outcomes().any(|o| o == Outcome::NotSatisfied)
    }

    /// Whether every claim in `required` is satisfied (see [`VerifiedReceipt::satisfies`]).
    pub fn satisfies_all(&self, required: &[Claim]) -> bool {
        required.iter().all(|c| self.satisfies(c))
    }
}
