//! The module graph of a crate's `src/`, for the tests that keep it free of cycles (issue 15):
//! `capability-gate/tests/modules.rs` and `tests/tests/web_modules.rs` call [`scan`] and
//! [`assert_acyclic`].
//!
//! A node is a top-level module of the crate: `src/<m>.rs`, or `src/<m>/mod.rs` with every file
//! under `src/<m>/` folded into it (`render/log.rs` is `render`). The crate root (`lib.rs`,
//! `main.rs`) is no node. An edge `y → x` is a path `crate::x…` in code of module `y` (also
//! inside `use crate::{a, b::{c, d}}` groups), or a `super::` chain that climbs out of `y`'s
//! files to the crate root (`super::super::x` in `src/y/z.rs`). A `super::` that stays inside
//! `y` (a submodule naming its parent, or an inline `mod tests` naming its file) is no edge.
//! Comments, string and character literals are skipped: a path in a doc comment or a message is
//! no dependency. A name the crate root re-exports (`pub use app::App;` in `lib.rs`, then
//! `crate::App`) is an edge to the module it comes from; a glob re-export (`pub use app::*;`)
//! makes every `crate::<name>` that is no module an edge to it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top-level module and the other top-level modules its code names.
pub type Edges = BTreeMap<String, BTreeSet<String>>;

/// Scans `src` (a crate's source directory) into its module graph.
///
/// # Panics
/// When `src` or a file under it cannot be read (this is test support).
pub fn scan(src: &Path) -> Edges {
    let mut files: BTreeMap<String, Vec<(PathBuf, usize)>> = BTreeMap::new();
    for entry in std::fs::read_dir(src).unwrap_or_else(|e| panic!("{}: {e}", src.display())) {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            for (file, depth) in rust_files(&path, 2) {
                files.entry(stem.clone()).or_default().push((file, depth));
            }
        } else if path.extension().is_some_and(|x| x == "rs") && stem != "lib" && stem != "main" {
            files.entry(stem).or_default().push((path, 1));
        }
    }
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let mut reexported: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for root in ["lib.rs", "main.rs"] {
        if let Ok(text) = std::fs::read_to_string(src.join(root)) {
            for (module, name) in root_uses(&text) {
                if modules.contains(&module) {
                    reexported.entry(name).or_default().insert(module);
                }
            }
        }
    }
    let globbed = reexported.remove("*").unwrap_or_default();
    files
        .iter()
        .map(|(module, files)| {
            let mut to = BTreeSet::new();
            for (file, depth) in files {
                let text = std::fs::read_to_string(file)
                    .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                for name in named_modules(&text, *depth) {
                    if modules.contains(&name) {
                        to.insert(name);
                    } else if let Some(from) = reexported.get(&name) {
                        to.extend(from.iter().cloned());
                    } else if name != "self" {
                        to.extend(globbed.iter().cloned());
                    }
                }
            }
            to.remove(module);
            (module.clone(), to)
        })
        .collect()
}

/// The names the crate root's own `use` items bring in (outside its inline modules), each with
/// the first segment of its path: `pub use app::{App, run as go};` gives (app, App), (app, go);
/// `pub use app::*;` gives (app, *).
pub fn root_uses(text: &str) -> Vec<(String, String)> {
    let code = code_only(text);
    let inline = inline_depths(&code);
    let mut found = Vec::new();
    for (at, _) in code.match_indices("use ") {
        let before = code[..at].chars().next_back();
        if inline[at] > 0 || before.is_some_and(is_ident) {
            continue;
        }
        let rest = &code[at + "use ".len()..];
        let tree = &rest[..rest.find(';').unwrap_or(rest.len())];
        let tokens = use_tokens(tree);
        let mut leaves = Vec::new();
        use_tree(&tokens, &mut 0, &mut Vec::new(), &mut leaves);
        found.extend(leaves);
    }
    found
}

fn use_tokens(tree: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut chars = tree.chars().peekable();
    while let Some(c) = chars.next() {
        if is_ident(c) {
            let mut word = c.to_string();
            while let Some(&n) = chars.peek().filter(|n| is_ident(**n)) {
                word.push(n);
                chars.next();
            }
            tokens.push(word);
        } else if c == ':' {
            if chars.peek() == Some(&':') {
                chars.next();
                tokens.push("::".to_owned());
            }
        } else if !c.is_whitespace() {
            tokens.push(c.to_string());
        }
    }
    tokens
}

/// Walks one use tree from `tokens[*at]`, with the path so far in `path`, and adds each leaf
/// as (the path's first real segment, the name it brings in).
fn use_tree(
    tokens: &[String],
    at: &mut usize,
    path: &mut Vec<String>,
    out: &mut Vec<(String, String)>,
) {
    let depth = path.len();
    if tokens.get(*at).is_some_and(|t| t == "::") {
        *at += 1; // `use ::std::…`
    }
    while let Some(token) = tokens.get(*at) {
        match token.as_str() {
            "{" => {
                *at += 1;
                while tokens.get(*at).is_some_and(|t| t != "}") {
                    use_tree(tokens, at, path, out);
                    if tokens.get(*at).is_some_and(|t| t == ",") {
                        *at += 1;
                    }
                }
                *at += 1;
                break;
            }
            "*" => {
                *at += 1;
                if let Some(first) = first_segment(path) {
                    out.push((first, "*".to_owned()));
                }
                break;
            }
            "," | "}" => break,
            _ => {
                path.push(token.clone());
                *at += 1;
                if tokens.get(*at).is_some_and(|t| t == "::") {
                    *at += 1;
                    continue;
                }
                let mut name = token.clone();
                if tokens.get(*at).is_some_and(|t| t == "as") {
                    name = tokens.get(*at + 1).cloned().unwrap_or_default();
                    *at += 2;
                }
                if name == "self" {
                    name = path.iter().rev().nth(1).cloned().unwrap_or_default();
                }
                if let Some(first) = first_segment(path) {
                    out.push((first, name));
                }
                break;
            }
        }
    }
    path.truncate(depth);
}

/// A use path's first segment that names something (`crate::` and `self::` skipped).
fn first_segment(path: &[String]) -> Option<String> {
    path.iter().find(|s| *s != "crate" && *s != "self").cloned()
}

/// The `.rs` files under `dir` with their depth as modules (`dir/x.rs` is `depth`,
/// `dir/mod.rs` is `depth - 1`: the directory's own module).
fn rust_files(dir: &Path, depth: usize) -> Vec<(PathBuf, usize)> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            out.extend(rust_files(&path, depth + 1));
        } else if path.extension().is_some_and(|x| x == "rs") {
            let own = path.file_stem().is_some_and(|s| s == "mod");
            out.push((path, if own { depth - 1 } else { depth }));
        }
    }
    out
}

/// The code of `text` with comments and string/character literals blanked out (each replaced
/// by spaces, line breaks kept).
pub fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let ident_before = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if !ident_before && raw_string_start(&chars, i).is_some() {
            // r"…", r#"…"#, br#"…"#: no escapes; ends at `"` followed by as many `#`.
            let (open, hashes) = raw_string_start(&chars, i).unwrap_or((0, 0));
            let mut j = i + open;
            while j < chars.len() {
                if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            for &c in &chars[i..j.min(chars.len())] {
                blank(&mut out, c);
            }
            i = j;
        } else if c == '"' {
            blank(&mut out, c);
            i += 1;
            while i < chars.len() {
                let c = chars[i];
                blank(&mut out, c);
                i += 1;
                if c == '\\' {
                    if let Some(&escaped) = chars.get(i) {
                        blank(&mut out, escaped);
                        i += 1;
                    }
                } else if c == '"' {
                    break;
                }
            }
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{1F600}', '\''), else a lifetime or label.
            let end = if next == Some('\\') {
                (i + 3..chars.len()).find(|&j| chars[j] == '\'')
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    for &c in &chars[i..=end] {
                        blank(&mut out, c);
                    }
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// At `chars[i]`, a raw string literal's opening (`r"`, `r#"`, `br##"`): its length and the
/// number of `#`.
fn raw_string_start(chars: &[char], i: usize) -> Option<(usize, usize)> {
    let mut j = i;
    if chars.get(j) == Some(&'b') {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = chars[j..].iter().take_while(|c| **c == '#').count();
    j += hashes;
    (chars.get(j) == Some(&'"')).then_some((j + 1 - i, hashes))
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The first path segment of each top-level item of the group that starts right after the
/// `{` at `text[..]`'s beginning (`a, b::{c, d}, e::f }` gives a, b, e).
fn group_heads(text: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0usize;
    let mut item = String::new();
    for c in text.chars() {
        match c {
            '{' => {
                depth += 1;
                item.push(c);
            }
            '}' if depth == 0 => break,
            '}' => {
                depth -= 1;
                item.push(c);
            }
            ',' if depth == 0 => heads.push(std::mem::take(&mut item)),
            c => item.push(c),
        }
    }
    heads.push(item);
    heads
        .iter()
        .map(|item| {
            item.trim()
                .chars()
                .take_while(|c| is_ident(*c))
                .collect::<String>()
        })
        .filter(|head| !head.is_empty())
        .collect()
}

/// The crate-level names the code of one file reaches through `crate::` (and `super::` chains
/// that climb to the crate root). `depth` is the file's depth as a module: 1 for `src/m.rs`
/// and `src/m/mod.rs`, 2 for `src/m/x.rs`.
pub fn named_modules(text: &str, depth: usize) -> BTreeSet<String> {
    let code = code_only(text);
    let mut names = BTreeSet::new();
    let mut roots: Vec<usize> = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(is_ident) {
            continue; // e.g. `my_crate::`
        }
        roots.push(at + "crate::".len());
    }
    // `super::super::…`: from a module at depth d (the file's, plus the inline `mod x { }`
    // around the path), d supers reach the crate root.
    let inline = inline_depths(&code);
    for (at, _) in code.match_indices("super::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| is_ident(c) || c == ':') {
            continue; // counted from the chain's first `super::`
        }
        let mut end = at;
        let mut climbs = 0;
        while code[end..].starts_with("super::") {
            end += "super::".len();
            climbs += 1;
            end += code[end..].len() - code[end..].trim_start().len();
        }
        if climbs >= depth + inline[at] {
            roots.push(end);
        }
    }
    for start in roots {
        let rest = code[start..].trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            names.extend(group_heads(group));
        } else {
            let name: String = rest.chars().take_while(|c| is_ident(*c)).collect();
            if !name.is_empty() {
                names.insert(name);
            }
        }
    }
    names
}

/// For each byte of `code`, how many inline modules (`mod x { … }`) enclose it.
fn inline_depths(code: &str) -> Vec<usize> {
    let mut depths = vec![0; code.len() + 1];
    // One entry per open brace: whether it opened a module.
    let mut open: Vec<bool> = Vec::new();
    let mut modules = 0;
    for (at, c) in code.char_indices() {
        match c {
            '{' => {
                let before = code[..at].trim_end();
                let name_len = before.chars().rev().take_while(|c| is_ident(*c)).count();
                let before = before[..before.len() - name_len].trim_end();
                let is_mod = name_len > 0
                    && before.ends_with("mod")
                    && !before[..before.len() - 3]
                        .chars()
                        .next_back()
                        .is_some_and(is_ident);
                open.push(is_mod);
                if is_mod {
                    modules += 1;
                }
            }
            '}' => modules -= usize::from(open.pop() == Some(true)),
            _ => {}
        }
        depths[at] = modules;
    }
    depths[code.len()] = modules;
    // Bytes inside a multi-byte character take the character's depth.
    for at in 1..depths.len() {
        if !code.is_char_boundary(at) {
            depths[at] = depths[at - 1];
        }
    }
    depths
}

/// The modules that reach themselves, each with one cycle through it (`a → b → a`), in the
/// graph's order.
pub fn cycles(edges: &Edges) -> Vec<Vec<String>> {
    let mut found: Vec<Vec<String>> = Vec::new();
    for start in edges.keys() {
        if let Some(path) = shortest_path(edges, start, start) {
            found.push(path);
        }
    }
    found
}

/// The shortest path `from → … → to` of at least one edge (breadth first).
fn shortest_path(edges: &Edges, from: &str, to: &str) -> Option<Vec<String>> {
    let mut came_from: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([from.to_owned()]);
    while let Some(m) = queue.pop_front() {
        for next in edges.get(&m).into_iter().flatten() {
            if next == to {
                let mut path = vec![to.to_owned(), m.clone()];
                let mut at = m.clone();
                while at != from {
                    at = came_from[&at].clone();
                    path.push(at.clone());
                }
                path.reverse();
                return Some(path);
            }
            if next != from && !came_from.contains_key(next) {
                came_from.insert(next.clone(), m.clone());
                queue.push_back(next.clone());
            }
        }
    }
    None
}

/// Fails, printing every cycle and the graph, when a module of `edges` reaches itself.
///
/// # Panics
/// When there is a cycle (this is a test assertion).
pub fn assert_acyclic(edges: &Edges) {
    let cycles = cycles(edges);
    if !cycles.is_empty() {
        let lines: Vec<String> = cycles.iter().map(|c| c.join(" → ")).collect();
        panic!(
            "modules in a cycle ({}):\n  {}\n\nthe graph:\n{edges:#?}",
            cycles.len(),
            lines.join("\n  ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str, depth: usize) -> Vec<String> {
        named_modules(text, depth).into_iter().collect()
    }

    #[test]
    fn paths_in_code_count_and_paths_in_comments_and_literals_do_not() {
        let text = r##"
            //! See `crate::doc_comment`.
            use crate::app::{App, with_app};
            use crate::{dom, render::{self, View}, signer::Enrolment};
            // crate::line_comment
            /* crate::block /* crate::nested */ crate::still_block */
            fn f<'a>(x: &'a str) -> char {
                let _ = "crate::in_string \" crate::escaped";
                let _ = r#"crate::raw " crate::raw_quote"#;
                let _ = '"'; let _ = crate::after_char::X;
                let _ = '\''; crate::after_escaped_char::f();
                my_crate::not_this();
                crate :: spaced();
                'x'
            }
            pub(crate) fn g() { crate::
                multi_line::h() }
        "##;
        assert_eq!(
            names(text, 1),
            [
                "after_char",
                "after_escaped_char",
                "app",
                "dom",
                "multi_line",
                "render",
                "signer"
            ]
        );
    }

    #[test]
    fn super_counts_only_when_it_climbs_to_the_crate_root() {
        // In an inline `mod tests` of a top-level file, `super::` is the file's module; in
        // the file's own code it is the crate root.
        assert!(names("mod tests { use super::*; use super::dom; }", 1).is_empty());
        assert_eq!(
            names(
                "mod tests { use super::super::a; } use super::b; mod c { } use super::d;",
                1
            ),
            ["a", "b", "d"]
        );
        assert_eq!(
            names(
                "pub mod outer { mod inner { use super::super::x; } fn f() {} }",
                1
            ),
            Vec::<String>::new()
        );
        // In `src/render/log.rs`, `super::` is `render`; `super::super::` is the crate root.
        assert!(names("use super::consent::money; use super::*;", 2).is_empty());
        assert_eq!(names("use super::super::intl::date;", 2), ["intl"]);
        assert_eq!(names("use super:: super::{a, b};", 2), ["a", "b"]);
        assert_eq!(names("use super::super::super::z;", 3), ["z"]);
        assert_eq!(
            names("fn f() { let modx = 1; { super::super::y(); } }", 2),
            ["y"]
        );
    }

    #[test]
    fn the_roots_use_items_give_each_name_with_its_module() {
        let lib = "
            mod app; mod render;
            pub use app::{App, run as go, state::{self, Call}};
            pub(crate) use crate::render::View;
            use self::dom::*;
            // use commented::Out;
            #[cfg(test)]
            mod tests { use super::tested::X; }
        ";
        let pairs: Vec<(&str, &str)> = vec![
            ("app", "App"),
            ("app", "go"),
            ("app", "state"),
            ("app", "Call"),
            ("render", "View"),
            ("dom", "*"),
        ];
        let found = root_uses(lib);
        let found: Vec<(&str, &str)> = found
            .iter()
            .map(|(m, n)| (m.as_str(), n.as_str()))
            .collect();
        assert_eq!(found, pairs);
    }

    #[test]
    fn groups_give_the_head_of_each_item_at_any_nesting() {
        assert_eq!(
            group_heads("a, b::{c, d::{e}}, f::g, {h}, self }"),
            ["a", "b", "f", "self"]
        );
        assert_eq!(group_heads(" }"), Vec::<String>::new());
    }

    fn graph(pairs: &[(&str, &str)]) -> Edges {
        let mut edges = Edges::new();
        for (from, to) in pairs {
            edges
                .entry((*from).to_owned())
                .or_default()
                .insert((*to).to_owned());
            edges.entry((*to).to_owned()).or_default();
        }
        edges
    }

    #[test]
    fn a_cycle_is_found_and_printed_and_a_tree_passes() {
        let tree = graph(&[("a", "b"), ("a", "c"), ("b", "c"), ("c", "d")]);
        assert!(cycles(&tree).is_empty());
        assert_acyclic(&tree);
        let cyclic = graph(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e")]);
        assert_eq!(
            cycles(&cyclic),
            [
                vec!["a", "b", "c", "a"],
                vec!["b", "c", "a", "b"],
                vec!["c", "a", "b", "c"]
            ]
        );
        let printed = std::panic::catch_unwind(|| assert_acyclic(&cyclic))
            .unwrap_err()
            .downcast::<String>()
            .unwrap();
        assert!(printed.contains("a → b → c → a"), "{printed}");
    }

    /// Writes `files` (path, text) into a fresh directory and scans it.
    fn scan_of(files: &[(&str, &str)]) -> Edges {
        let dir = std::env::temp_dir().join(format!(
            "tacit-modules-{}-{}",
            std::process::id(),
            files.len()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        for (path, text) in files {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let edges = scan(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        edges
    }

    #[test]
    fn nested_files_fold_into_their_top_level_module() {
        let edges = scan_of(&[
            ("lib.rs", "mod app; mod render; use crate::app::x;"),
            ("app.rs", "use crate::render::View;"),
            ("dom.rs", ""),
            ("render/mod.rs", "use super::dom; mod deep;"),
            ("render/deep/mod.rs", "use super::super::dom;"),
            ("render/deep/x.rs", "use super::super::super::app;"),
        ]);
        assert_eq!(edges.keys().collect::<Vec<_>>(), ["app", "dom", "render"]);
        assert_eq!(edges["app"], BTreeSet::from(["render".to_owned()]));
        // `super::` in render/mod.rs is the crate root; the nested files' chains reach it too
        // and count for render.
        assert_eq!(
            edges["render"],
            BTreeSet::from(["app".to_owned(), "dom".to_owned()])
        );
        assert_eq!(cycles(&edges).len(), 2);
    }

    #[test]
    fn a_name_the_root_re_exports_is_an_edge_to_its_module() {
        let edges = scan_of(&[
            (
                "lib.rs",
                "mod a; mod b; mod c; mod d; pub use a::{Thing as Renamed}; pub use d::*;",
            ),
            ("a.rs", "use crate::b::f;"),
            ("b.rs", "fn f(_: crate::Renamed) {}"),
            ("c.rs", "fn g() { crate::from_glob(); }"),
            ("d.rs", ""),
        ]);
        assert_eq!(edges["b"], BTreeSet::from(["a".to_owned()]));
        assert_eq!(edges["c"], BTreeSet::from(["d".to_owned()]));
        assert_eq!(cycles(&edges).len(), 2, "{edges:?}");
    }
}
