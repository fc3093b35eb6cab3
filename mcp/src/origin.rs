//! Which pages the door mirrors, and the namespace each one's tools are listed under. Pure.
//!
//! The person names origins (`--origin http://localhost:8080`, repeatable) or URL prefixes
//! (`--page http://localhost:8080/wallet/`, whose origin counts as named); nothing else is
//! mirrored. A tool's MCP name is `<namespace>.<WebMCP name>`, where the namespace is derived
//! from its frame's origin alone (host and port: `localhost_8080`, `127-0-0-1_9000`), so no page
//! can choose it: a namespace holds only `[A-Za-z0-9_-]` (never a `.`), so the first `.` of an
//! MCP name ends it, and a tab on another origin can never list a name under the named origin's
//! namespace, whatever it registers.

use std::fmt;

/// A named origin, or a URL prefix within one: what the person allowed to be mirrored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// The origin, serialized as browsers do (`http://localhost:8080`, default ports omitted).
    pub origin: String,
    /// A URL prefix pages must start with (`None` for a whole origin).
    pub prefix: Option<String>,
}

/// Why a command-line origin or prefix was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadOrigin(String);

impl fmt::Display for BadOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadOrigin {}

impl Scope {
    /// `--origin`: `scheme://host[:port]` (a trailing `/` is allowed; nothing else after it).
    pub fn origin(text: &str) -> Result<Self, BadOrigin> {
        let (origin, rest) = split_origin(text)?;
        if !(rest.is_empty() || rest == "/") {
            return Err(BadOrigin(format!(
                "`{text}` is not an origin (scheme://host[:port]); use --page for a URL prefix"
            )));
        }
        Ok(Self {
            origin,
            prefix: None,
        })
    }

    /// `--page`: a URL prefix; its origin must match exactly, then the URL must start with it.
    pub fn page(text: &str) -> Result<Self, BadOrigin> {
        let (origin, rest) = split_origin(text)?;
        Ok(Self {
            prefix: (!(rest.is_empty() || rest == "/")).then(|| format!("{origin}{rest}")),
            origin,
        })
    }

    /// Whether a frame at `url` with the browser-computed `origin` is in this scope.
    pub fn admits(&self, origin: &str, url: &str) -> bool {
        self.origin == origin
            && self
                .prefix
                .as_deref()
                .is_none_or(|prefix| url.starts_with(prefix))
    }
}

/// Checks the named scopes: at least one, and no two origins sharing a namespace. Returns the
/// scopes unchanged, or the sentence to print.
pub fn checked(scopes: Vec<Scope>) -> Result<Vec<Scope>, BadOrigin> {
    if scopes.is_empty() {
        return Err(BadOrigin(
            "name the origins whose tools to mirror, e.g. `--origin http://localhost:8080` \
             (repeatable); without one the door would mirror nothing, so it does not start"
                .to_owned(),
        ));
    }
    for (i, a) in scopes.iter().enumerate() {
        for b in &scopes[..i] {
            if a.origin != b.origin && namespace(&a.origin) == namespace(&b.origin) {
                return Err(BadOrigin(format!(
                    "{} and {} would share the tool namespace `{}`; name only one of them",
                    b.origin,
                    a.origin,
                    namespace(&a.origin)
                )));
            }
        }
    }
    Ok(scopes)
}

/// The namespace of an origin: its host with every character outside `[A-Za-z0-9-]` made `-`,
/// then `_` and its port (the scheme's default port when none is written). Never contains `.`.
pub fn namespace(origin: &str) -> String {
    let (scheme, authority) = origin.split_once("://").unwrap_or(("", origin));
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => {
            (host, port.to_owned())
        }
        _ => (authority, default_port(scheme).to_owned()),
    };
    let host: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let host = host.trim_matches('-');
    let host = if host.is_empty() { "page" } else { host };
    format!("{host}_{port}")
}

fn default_port(scheme: &str) -> &'static str {
    match scheme {
        "https" | "wss" => "443",
        "http" | "ws" => "80",
        _ => "0",
    }
}

/// The origin of an http(s) `url` as a browser serializes it (`None` for other schemes).
pub fn origin_of_url(url: &str) -> Option<String> {
    split_origin(url).ok().map(|(origin, _)| origin)
}

/// `scheme://host[:port]` of `text` as a browser serializes it (lowercase scheme and host,
/// default port dropped), and the rest of the text after it.
fn split_origin(text: &str) -> Result<(String, &str), BadOrigin> {
    let bad = |why: &str| BadOrigin(format!("`{text}` is not an http(s) URL: {why}"));
    let (scheme, rest) = text.split_once("://").ok_or_else(|| bad("no scheme://"))?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(bad("the scheme must be http or https"));
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, rest) = rest.split_at(end);
    if authority.is_empty() || authority.contains('@') {
        return Err(bad("it needs a host (and no user name)"));
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, _)) if !host.ends_with(']') && host.contains(':') => (authority, None),
        Some((host, port)) => {
            let port: u16 = port.parse().map_err(|_| bad("the port is not a number"))?;
            (host, Some(port))
        }
        None => (authority, None),
    };
    let host = host.to_ascii_lowercase();
    if host.is_empty() {
        return Err(bad("it needs a host"));
    }
    let default = if scheme == "https" { 443 } else { 80 };
    let origin = match port {
        Some(port) if port != default => format!("{scheme}://{host}:{port}"),
        _ => format!("{scheme}://{host}"),
    };
    Ok((origin, rest))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_normalized_as_browsers_serialize_them() {
        let s = Scope::origin("HTTP://LocalHost:8080/").unwrap();
        assert_eq!(s.origin, "http://localhost:8080");
        assert_eq!(s.prefix, None);
        assert_eq!(
            Scope::origin("https://a.example:443").unwrap().origin,
            "https://a.example"
        );
        assert_eq!(
            Scope::origin("http://[::1]:9000").unwrap().origin,
            "http://[::1]:9000"
        );
        for bad in [
            "localhost:8080",
            "file:///x",
            "http://",
            "http://u@h",
            "http://h:x",
            "http://h/p",
        ] {
            assert!(Scope::origin(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_prefix_needs_the_exact_origin_too() {
        let p = Scope::page("http://localhost:8080/wallet/").unwrap();
        assert!(p.admits("http://localhost:8080", "http://localhost:8080/wallet/?x"));
        assert!(!p.admits("http://localhost:8080", "http://localhost:8080/other"));
        // Plain prefix matching would let these through.
        let o = Scope::page("http://localhost:8080").unwrap();
        assert_eq!(o.prefix, None);
        assert!(o.admits("http://localhost:8080", "http://localhost:8080/"));
        assert!(!o.admits("http://localhost:80801", "http://localhost:80801/"));
        assert!(!o.admits(
            "http://localhost:8080.evil.example",
            "http://localhost:8080.evil.example/"
        ));
    }

    #[test]
    fn namespaces_come_from_host_and_port_and_hold_no_dot() {
        assert_eq!(namespace("http://localhost:8080"), "localhost_8080");
        assert_eq!(namespace("http://127.0.0.1:9000"), "127-0-0-1_9000");
        assert_eq!(namespace("https://a.example"), "a-example_443");
        assert_eq!(namespace("http://[::1]:9000"), "1_9000");
        assert_eq!(namespace("null"), "null_0");
        for ns in [namespace("http://a.b.c:1"), namespace("http://x_y.z:2")] {
            assert!(
                ns.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
                "{ns}"
            );
        }
    }

    #[test]
    fn none_named_or_a_shared_namespace_is_refused() {
        assert!(
            checked(vec![])
                .unwrap_err()
                .to_string()
                .contains("--origin")
        );
        let two = vec![
            Scope::origin("http://localhost:8080").unwrap(),
            Scope::origin("https://localhost:8080").unwrap(),
        ];
        assert!(checked(two).unwrap_err().to_string().contains("namespace"));
        let fine = vec![
            Scope::origin("http://localhost:8080").unwrap(),
            Scope::page("http://localhost:8080/x").unwrap(),
            Scope::origin("http://127.0.0.1:8080").unwrap(),
        ];
        assert_eq!(checked(fine.clone()).unwrap(), fine);
    }
}
