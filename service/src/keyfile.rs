//! Private key files: the one way the signer, the issuer and the site server read and write a
//! file that holds a secret key.
//!
//! - A key file is written with mode 0600 and never overwritten in place: [`create_private`]
//!   refuses an existing file, [`replace_private`] writes a private file beside it and renames it
//!   over.
//! - [`read_private`] refuses a file that is missing, not a regular file, readable by group or
//!   others, or larger than the caller's cap. The checks run on the open handle, so the file
//!   cannot be swapped between check and read.
//! - The bytes read or written are held in zeroizing buffers; [`SecretHex`] holds a 32-byte
//!   secret as 64 lowercase hex digits and wipes them on drop.
//!
//! [`KeyFileStore`] is the rest of what the signer's and the issuer's rotating key stores share:
//! `load`, `keygen` (create or, with `--force`, replace) and `rotate`, over a JSON file whose
//! shape each store defines. The site's single key uses the lower-level functions.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use wallet_core::Timestamp;
use zeroize::Zeroizing;

/// What went wrong with a key file; `program` names the tool whose commands the message suggests.
#[derive(Debug)]
pub struct KeyFileError {
    pub program: &'static str,
    pub path: String,
    pub problem: Problem,
}

/// The ways a key file can be refused.
#[derive(Debug)]
pub enum Problem {
    /// There is no file at the path.
    Missing,
    /// The file may be read by group or others.
    Permissions { mode: u32 },
    /// `keygen` (without `--force`) would overwrite a key.
    Exists,
    /// The file is not what `keygen` writes; the reason is a fixed sentence.
    Format(&'static str),
    /// A file operation failed.
    Io {
        action: &'static str,
        source: std::io::Error,
    },
}

impl core::fmt::Display for KeyFileError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let (path, program) = (&self.path, self.program);
        match &self.problem {
            Problem::Missing => write!(
                f,
                "no key file at {path}; create one with `{program} keygen --key-file {path}`"
            ),
            Problem::Permissions { mode } => write!(
                f,
                "key file {path} is readable by group or others (mode {mode:03o}); \
                 run `chmod 600 {path}` and check who else could have read it"
            ),
            Problem::Exists => write!(
                f,
                "key file {path} already exists; use `{program} rotate` to replace the active \
                 key while keeping the old one published, or `keygen --force` to discard it"
            ),
            Problem::Format(reason) => {
                write!(
                    f,
                    "key file {path} is not a valid {program} key file: {reason}"
                )
            }
            Problem::Io { action, source } => write!(f, "could not {action} {path}: {source}"),
        }
    }
}

impl std::error::Error for KeyFileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.problem {
            Problem::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

fn refused(program: &'static str, path: &Path, problem: Problem) -> KeyFileError {
    KeyFileError {
        program,
        path: path.display().to_string(),
        problem,
    }
}

fn io(
    program: &'static str,
    action: &'static str,
    path: &Path,
    source: std::io::Error,
) -> KeyFileError {
    refused(program, path, Problem::Io { action, source })
}

/// Reads a private file of at most `max_bytes`.
pub fn read_private(
    program: &'static str,
    path: &Path,
    max_bytes: u64,
) -> Result<Zeroizing<Vec<u8>>, KeyFileError> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(refused(program, path, Problem::Missing));
        }
        Err(source) => return Err(io(program, "open", path, source)),
    };
    let meta = file
        .metadata()
        .map_err(|source| io(program, "inspect", path, source))?;
    if !meta.is_file() {
        return Err(refused(
            program,
            path,
            Problem::Format("not a regular file"),
        ));
    }
    check_private(program, path, &meta)?;
    if meta.len() > max_bytes {
        return Err(refused(program, path, Problem::Format("too large")));
    }
    let mut bytes = Zeroizing::new(Vec::with_capacity(4096));
    file.take(max_bytes)
        .read_to_end(&mut bytes)
        .map_err(|source| io(program, "read", path, source))?;
    Ok(bytes)
}

/// Reads a private file of at most `max_bytes` as JSON of type `T`.
pub fn read_json<T: DeserializeOwned>(
    program: &'static str,
    path: &Path,
    max_bytes: u64,
) -> Result<T, KeyFileError> {
    let bytes = read_private(program, path, max_bytes)?;
    serde_json::from_slice(&bytes).map_err(|_| {
        refused(
            program,
            path,
            Problem::Format("not the JSON that keygen writes"),
        )
    })
}

/// `value` as pretty JSON and a newline, in a zeroizing buffer of `capacity` bytes (large enough
/// that serialising never reallocates and leaves a copy behind).
pub fn to_json<T: Serialize>(value: &T, capacity: usize) -> Option<Zeroizing<Vec<u8>>> {
    let mut bytes = Zeroizing::new(Vec::with_capacity(capacity));
    serde_json::to_writer_pretty(&mut *bytes, value).ok()?;
    bytes.push(b'\n');
    Some(bytes)
}

/// Writes `bytes` to a new file with mode 0600; refuses to replace an existing one.
pub fn create_private(
    program: &'static str,
    path: &Path,
    bytes: &[u8],
) -> Result<(), KeyFileError> {
    let mut file = match open_private(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(refused(program, path, Problem::Exists));
        }
        Err(source) => return Err(io(program, "create", path, source)),
    };
    write_all(program, &mut file, path, bytes)
}

/// Replaces the file at `path` with `bytes`: writes a private file beside it, then renames it
/// over.
pub fn replace_private(
    program: &'static str,
    path: &Path,
    bytes: &[u8],
) -> Result<(), KeyFileError> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp-{}", std::process::id()));
    let temp = path.with_file_name(name);
    let _ = fs::remove_file(&temp);
    let mut file = open_private(&temp).map_err(|source| io(program, "create", &temp, source))?;
    let written = write_all(program, &mut file, &temp, bytes)
        .and_then(|()| fs::rename(&temp, path).map_err(|e| io(program, "replace", path, e)));
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
}

fn write_all(
    program: &'static str,
    file: &mut File,
    path: &Path,
    bytes: &[u8],
) -> Result<(), KeyFileError> {
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|source| io(program, "write", path, source))
}

#[cfg(unix)]
fn open_private(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

#[cfg(not(unix))]
fn open_private(path: &Path) -> std::io::Result<File> {
    OpenOptions::new().write(true).create_new(true).open(path)
}

#[cfg(unix)]
fn check_private(
    program: &'static str,
    path: &Path,
    meta: &fs::Metadata,
) -> Result<(), KeyFileError> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(refused(program, path, Problem::Permissions { mode }));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_private(_: &'static str, _: &Path, _: &fs::Metadata) -> Result<(), KeyFileError> {
    Ok(())
}

/// A 32-byte secret as 64 lowercase hex digits, wiped on drop. Deserialising accepts any string;
/// [`SecretHex::seed`] checks it.
pub struct SecretHex(Zeroizing<String>);

impl SecretHex {
    /// The hex of `seed`.
    pub fn from_seed(seed: &[u8; 32]) -> Self {
        let mut digits = Zeroizing::new([0u8; 64]);
        // Cannot fail: the output is exactly twice the input.
        let _ = hex::encode_to_slice(seed, &mut *digits);
        let mut text = Zeroizing::new(String::with_capacity(64));
        text.extend(digits.iter().map(|&b| char::from(b)));
        Self(text)
    }

    /// The 32 bytes, or `None` unless the text is exactly 64 lowercase hex digits.
    pub fn seed(&self) -> Option<Zeroizing<[u8; 32]>> {
        let text = self.0.as_bytes();
        let lower_hex =
            text.len() == 64 && text.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        let mut seed = Zeroizing::new([0u8; 32]);
        (lower_hex && hex::decode_to_slice(text, &mut *seed).is_ok()).then_some(seed)
    }
}

impl SecretHex {
    /// [`SecretHex::seed`], or the sentence a rotating key file is refused with.
    pub fn key_seed(&self) -> Result<Zeroizing<[u8; 32]>, &'static str> {
        self.seed()
            .ok_or("the secret key must be 64 lowercase hex digits")
    }
}

impl core::fmt::Debug for SecretHex {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("SecretHex(..)")
    }
}

impl Serialize for SecretHex {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for SecretHex {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(|s| SecretHex(Zeroizing::new(s)))
    }
}

/// The JSON of a rotating key file: `{"format": tag, "active": A, "retired": [R, …]}`, where the
/// active entry `A` holds the secret in a [`SecretHex`] and each `R` is a retired public key.
/// Unknown fields are refused.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyFileJson<A, R> {
    format: String,
    active: A,
    retired: Vec<R>,
}

impl<A, R> KeyFileJson<A, R> {
    /// A file with the format tag `format`.
    pub fn new(format: &str, active: A, retired: Vec<R>) -> Self {
        Self {
            format: format.to_owned(),
            active,
            retired,
        }
    }

    /// The active entry and the retired ones, if the file's format tag is `format`.
    pub fn parts(self, format: &str) -> Result<(A, Vec<R>), &'static str> {
        if self.format != format {
            return Err("unknown format tag");
        }
        Ok((self.active, self.retired))
    }
}

/// A rotating key store kept in one private JSON file: an active signing key and the retired
/// public keys still published.
pub trait KeyFileStore: Sized {
    /// The command-line tool named in error messages (`tacit-signer`, `tacit-issuer`).
    const PROGRAM: &'static str;
    /// Largest key file [`load`] reads.
    const MAX_BYTES: u64 = 1 << 20;
    /// The crate's error type.
    type Error: From<KeyFileError>;
    /// A key id.
    type Id;
    /// The file's JSON shape (holding the secret in a [`SecretHex`]).
    type Contents: Serialize + DeserializeOwned;

    /// A store with a fresh key active from `now` and nothing retired.
    fn make(now: Timestamp) -> Result<Self, Self::Error>;
    /// Retires the active key at `now` (it stays published) and makes a fresh one active.
    fn rotate(&mut self, now: Timestamp) -> Result<(), Self::Error>;
    /// The active key's id.
    fn active_id(&self) -> Self::Id;
    /// The store as the file holds it.
    fn to_contents(&self) -> Self::Contents;
    /// The store from the file; the error is a fixed sentence.
    fn from_contents(contents: Self::Contents) -> Result<Self, &'static str>;
}

/// Reads a key file, refusing one that is missing, readable by group or others, or malformed.
pub fn load<K: KeyFileStore>(path: &Path) -> Result<K, K::Error> {
    let contents = read_json(K::PROGRAM, path, K::MAX_BYTES)?;
    K::from_contents(contents)
        .map_err(|reason| refused(K::PROGRAM, path, Problem::Format(reason)).into())
}

fn encode<K: KeyFileStore>(keys: &K, path: &Path) -> Result<Zeroizing<Vec<u8>>, KeyFileError> {
    let capacity = usize::try_from(K::MAX_BYTES).unwrap_or(usize::MAX);
    to_json(&keys.to_contents(), capacity)
        .filter(|bytes| bytes.len() as u64 <= K::MAX_BYTES)
        .ok_or_else(|| refused(K::PROGRAM, path, Problem::Format("could not be encoded")))
}

/// Writes the store to a new file with mode 0600; refuses to replace an existing one.
pub fn create<K: KeyFileStore>(keys: &K, path: &Path) -> Result<(), K::Error> {
    Ok(create_private(K::PROGRAM, path, &encode(keys, path)?)?)
}

/// Replaces the store's file: writes a private file beside it, then renames it over.
pub fn replace<K: KeyFileStore>(keys: &K, path: &Path) -> Result<(), K::Error> {
    Ok(replace_private(K::PROGRAM, path, &encode(keys, path)?)?)
}

/// `keygen`: a new key file with a fresh key (replacing an existing one only if `force`).
/// Returns the new key's id.
pub fn keygen<K: KeyFileStore>(
    path: &Path,
    now: Timestamp,
    force: bool,
) -> Result<K::Id, K::Error> {
    let store = K::make(now)?;
    if force {
        replace(&store, path)?;
    } else {
        create(&store, path)?;
    }
    Ok(store.active_id())
}

/// `rotate`: retires the file's active key (still published) and adds a fresh one. Returns the
/// old and the new key ids.
pub fn rotate_file<K: KeyFileStore>(
    path: &Path,
    now: Timestamp,
) -> Result<(K::Id, K::Id), K::Error> {
    let mut store = load::<K>(path)?;
    let old = store.active_id();
    store.rotate(now)?;
    replace(&store, path)?;
    Ok((old, store.active_id()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn secret_hex_round_trips_and_refuses_anything_else() {
        let seed = [0xabu8; 32];
        let hex = SecretHex::from_seed(&seed);
        assert_eq!(hex.0.as_str(), "ab".repeat(32));
        assert_eq!(*hex.seed().unwrap(), seed);
        for bad in [
            "AB".repeat(32),
            "ab".repeat(31),
            "ab".repeat(33),
            "zz".repeat(32),
        ] {
            assert!(
                SecretHex(Zeroizing::new(bad.clone())).seed().is_none(),
                "{bad}"
            );
        }
    }

    #[test]
    fn create_refuses_to_overwrite_and_replace_keeps_it_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.json");
        assert!(matches!(
            read_private("t", &path, 10).unwrap_err().problem,
            Problem::Missing
        ));
        create_private("t", &path, b"one").unwrap();
        let err = create_private("t", &path, b"two").unwrap_err();
        assert!(matches!(err.problem, Problem::Exists));
        assert!(err.to_string().contains("`t rotate`"), "{err}");
        assert_eq!(read_private("t", &path, 10).unwrap().as_slice(), b"one");
        replace_private("t", &path, b"three").unwrap();
        assert_eq!(read_private("t", &path, 10).unwrap().as_slice(), b"three");
        let err = read_private("t", &path, 4).unwrap_err();
        assert!(matches!(err.problem, Problem::Format("too large")));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
            let err = read_private("t", &path, 10).unwrap_err();
            assert!(matches!(err.problem, Problem::Permissions { mode: 0o640 }));
        }
        let err = read_private("t", dir.path(), 10).unwrap_err();
        assert!(matches!(err.problem, Problem::Format("not a regular file")));
    }
}
