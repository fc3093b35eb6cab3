//! `cargo xtask build-web`: every wasm site, built and laid out under `target/site/<name>/`.
//!
//! For each [`Site`]: `cargo build --target wasm32-unknown-unknown --profile wasm-release`, then
//! wasm-bindgen (the `wasm-bindgen-cli-support` library, at exactly the version of the
//! `wasm-bindgen` crate in Cargo.lock) with `--target web` into `pkg/`, the site's static files
//! next to it, then binaryen's `wasm-opt` ([`WASM_OPT_LEVEL`], with the features the module
//! uses) in place, and the sizes before and after in `size.json`.
//!
//! `ci`, `demo` and `bench` install binaryen first ([`ensure_wasm_opt`]) and build with
//! [`WasmOpt::Required`]; a bare `cargo xtask build-web` without a `wasm-opt` on `PATH` still
//! builds, unoptimised, and says so loudly (and `size.json` says `"wasm_opt": false`).

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::{cargo, run, target_dir, workspace_root};

/// A wasm site: one cdylib crate whose `static/` directory holds the page around it.
#[derive(Debug, Clone, Copy)]
pub struct Site {
    /// Output directory name under `target/site/`.
    pub name: &'static str,
    /// Cargo package name.
    pub package: &'static str,
    /// Its library name (the `.wasm` file stem, and the `pkg/<lib>.js` module name).
    pub lib: &'static str,
    /// The crate's directory, relative to the workspace root; its `static/` is copied next to
    /// `pkg/`, and its `tests/*.rs` are wasm-bindgen tests run in Chromium by `ci`.
    pub dir: &'static str,
    /// A directory (relative to the root) of static files shared with other sites, copied
    /// before the site's own `static/` (which wins on a clash).
    pub shared_static: Option<&'static str>,
    /// The site's words for the relying sites' page ([`SITE_PAGE`]), relative to the root: its
    /// `index.html` is written from them ([`site_page`]).
    pub page: Option<&'static str>,
    /// Who the page's boot note names when its wasm fails to start ("The wallet could not
    /// start: …"); see [`boot_js`].
    pub who: &'static str,
    /// The small module the page loads first, when its own module (`lib`) is loaded only on
    /// first use; `None`: the page loads `lib` at once.
    pub first_load: Option<FirstLoad>,
    /// Modules the page fetches only when a person needs them (built, optimised and sized like
    /// the others, into the same `pkg/`).
    pub on_demand: &'static [OnDemand],
}

/// A module a page loads only when it is needed ([`Site::on_demand`]).
#[derive(Debug, Clone, Copy)]
pub struct OnDemand {
    pub package: &'static str,
    pub lib: &'static str,
    /// When the page loads it, in words (`cargo xtask bench`'s size table).
    pub when: &'static str,
}

/// A page's first-load module ([`Site::first_load`]) and the loader that starts it and loads
/// the page's own module on first use.
#[derive(Debug, Clone, Copy)]
pub struct FirstLoad {
    pub package: &'static str,
    pub lib: &'static str,
    /// The page's `boot.js` template (instead of [`BOOT_TEMPLATE`]), with `__BOOT__` (this
    /// module), `__MODULE__` and `__WHO__` slots.
    pub template: &'static str,
}

/// Every wasm site. Adding one is one line here.
pub const SITES: &[Site] = &[
    Site {
        name: "wallet",
        package: "tacit-web",
        lib: "tacit_web",
        dir: "web",
        shared_static: None,
        page: None,
        who: "The wallet",
        first_load: Some(FirstLoad {
            package: "tacit-wallet-boot",
            lib: "tacit_wallet_boot",
            template: "web/wallet-boot.js",
        }),
        on_demand: &[OnDemand {
            package: "tacit-wallet-strength",
            lib: "tacit_wallet_strength",
            when: "when a new passphrase is typed",
        }],
    },
    Site {
        name: "bridge",
        package: "tacit-bridge",
        lib: "tacit_bridge",
        dir: "web/bridge",
        shared_static: None,
        page: None,
        who: "The bridge",
        first_load: None,
        on_demand: &[],
    },
    Site {
        name: "housing",
        package: "tacit-housing",
        lib: "tacit_housing",
        dir: "examples/housing",
        shared_static: Some("examples/site/static"),
        page: Some("examples/housing/page.html"),
        who: "This page",
        first_load: None,
        on_demand: &[],
    },
    Site {
        name: "pharmacy",
        package: "tacit-pharmacy",
        lib: "tacit_pharmacy",
        dir: "examples/pharmacy",
        shared_static: Some("examples/site/static"),
        page: Some("examples/pharmacy/page.html"),
        who: "This page",
        first_load: None,
        on_demand: &[],
    },
];

/// Files every page gets next to its own static ones, as (source relative to the workspace root,
/// destination relative to the site's output): the vendored `@mcp-b/webmcp-polyfill` (pinned, its
/// sums in `vendor/webmcp-polyfill/VERSION`, checked by `cargo test -p tacit-web`) with its
/// licence beside it, and the loader every `boot.js` imports, which loads the polyfill only when
/// `document.modelContext` is absent.
pub const WEBMCP_FILES: [(&str, &str); 3] = [
    (
        "vendor/webmcp-polyfill/index.iife.js",
        "vendor/webmcp-polyfill.js",
    ),
    (
        "vendor/webmcp-polyfill/LICENSE",
        "vendor/webmcp-polyfill.LICENSE",
    ),
    ("web/static/webmcp.js", "webmcp.js"),
];

/// The one `boot.js` of every page, with `__MODULE__` and `__WHO__` where [`boot_js`] writes the
/// site's module and name.
pub const BOOT_TEMPLATE: &str = "web/boot.js";

/// A site's `boot.js`: [`BOOT_TEMPLATE`] with the site's wasm-bindgen module (`pkg/<lib>.js`)
/// and the name its boot note gives when the module fails to start.
pub fn boot_js(template: &str, site: &Site) -> Result<String, String> {
    let boot = site.first_load.map(|f| f.lib);
    let slots = [
        ("__MODULE__", Some(site.lib)),
        ("__WHO__", Some(site.who)),
        ("__BOOT__", boot),
    ];
    let mut text = template.to_owned();
    for (slot, value) in slots {
        let wanted = usize::from(value.is_some());
        if template.matches(slot).count() != wanted {
            return Err(format!(
                "{}'s boot.js template must hold {slot} {}",
                site.name,
                if wanted == 1 {
                    "exactly once"
                } else {
                    "nowhere"
                }
            ));
        }
        if let Some(value) = value {
            text = text.replace(slot, value);
        }
    }
    Ok(text)
}

/// The template of the site's `boot.js`.
pub fn boot_template(site: &Site) -> &'static str {
    site.first_load.map_or(BOOT_TEMPLATE, |f| f.template)
}

/// Writes the site's `boot.js` into its output `out`.
fn write_boot_js(root: &Path, site: &Site, out: &Path) -> Result<(), String> {
    let from = root.join(boot_template(site));
    let template =
        fs::read_to_string(&from).map_err(|e| format!("reading {}: {e}", from.display()))?;
    let to = out.join("boot.js");
    fs::write(&to, boot_js(&template, site)?).map_err(|e| format!("writing {}: {e}", to.display()))
}

/// The page of every relying site, with `{{slot}}`s each site's `page` fills ([`site_page`]).
pub const SITE_PAGE: &str = "examples/site/page.html";

/// [`SITE_PAGE`]'s `template` with each `{{name}}` filled from `slots`: text in which a line
/// `<!-- slot name -->` starts a slot whose value runs to the next such line (its last newline
/// dropped); text before the first is a comment. Every slot must be given once and be in the
/// template once, and none may be left unfilled.
pub fn site_page(template: &str, slots: &str) -> Result<String, String> {
    let mut given: Vec<(&str, String)> = Vec::new();
    for line in slots.split_inclusive('\n') {
        let marker = line
            .trim_end()
            .strip_prefix("<!-- slot ")
            .and_then(|rest| rest.strip_suffix(" -->"));
        if let Some(name) = marker {
            if given.iter().any(|(n, _)| *n == name) {
                return Err(format!("slot `{name}` is given twice"));
            }
            given.push((name, String::new()));
        } else if let Some((_, value)) = given.last_mut() {
            value.push_str(line);
        }
    }
    let mut page = template.to_owned();
    for (name, value) in &given {
        let slot = format!("{{{{{name}}}}}");
        if page.matches(&slot).count() != 1 {
            return Err(format!(
                "{SITE_PAGE} has no slot `{name}` (or has it twice)"
            ));
        }
        page = page.replace(&slot, value.strip_suffix('\n').unwrap_or(value));
    }
    if let Some(at) = page.find("{{") {
        let slot: String = page[at..].chars().take_while(|c| *c != '}').collect();
        return Err(format!("slot `{}` of {SITE_PAGE} is not given", &slot[2..]));
    }
    Ok(page)
}

/// wasm-bindgen `--target web` on the module `input` into `pkg/<lib>.js` and `pkg/<lib>_bg.wasm`
/// (with `<lib>.d.ts` when `typescript`), without the name and producers sections.
pub(crate) fn bindgen_web(
    input: &Path,
    lib: &str,
    typescript: bool,
    pkg: &Path,
) -> Result<(), String> {
    let mut bindgen = wasm_bindgen_cli_support::Bindgen::new();
    bindgen
        .input_path(input)
        .out_name(lib)
        .web(true)
        .map_err(|e| format!("wasm-bindgen: {e:#}"))?
        .typescript(typescript)
        .omit_default_module_path(false)
        .remove_name_section(true)
        .remove_producers_section(true);
    bindgen
        .generate(pkg)
        .map_err(|e| format!("wasm-bindgen on {}: {e:#}", input.display()))
}

/// Writes the site's `index.html` from [`SITE_PAGE`] and its `page` into its output `out`.
fn write_site_page(root: &Path, page: &str, out: &Path) -> Result<(), String> {
    let read = |path: &Path| {
        fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))
    };
    let html = site_page(&read(&root.join(SITE_PAGE))?, &read(&root.join(page))?)
        .map_err(|e| format!("{page}: {e}"))?;
    let to = out.join("index.html");
    fs::write(&to, html).map_err(|e| format!("writing {}: {e}", to.display()))
}

const WASM_TARGET: &str = "wasm32-unknown-unknown";
const PROFILE: &str = "wasm-release";

/// The `wasm-opt` level. Measured on the wallet (opt-level "z", binaryen 108): `-Oz` and `-Os`
/// alone make the gzipped file *larger* (445 -> 474 KiB: inlining every function that has one
/// caller makes the code less repetitive); with that inlining off (`-ocimfs=0`) `-Oz` gives
/// 1,230 KB raw / 445.9 KB gzip, `-Os` 1,248 KB / 444.8 KB. `-Oz` for the smaller raw size.
pub const WASM_OPT_LEVEL: &str = "-Oz";
/// Passed after [`WASM_OPT_LEVEL`]: no inlining of functions just because they have one caller.
const WASM_OPT_TUNING: [&str; 1] = ["--one-caller-inline-max-function-size=0"];
/// The wasm features rustc and wasm-bindgen emit for `wasm32-unknown-unknown` (Rust's
/// defaults, and [`WASM_RUSTFLAGS`]' SIMD); `wasm-opt` refuses or mis-optimises a module whose
/// features it was not told of.
const WASM_OPT_FEATURES: [&str; 7] = [
    "--enable-simd",
    "--enable-bulk-memory",
    "--enable-nontrapping-float-to-int",
    "--enable-sign-ext",
    "--enable-mutable-globals",
    "--enable-reference-types",
    "--enable-multivalue",
];
/// The sites' wasm is built with 128-bit SIMD (every current browser has it: Chromium 91,
/// Firefox 89, Safari 16.4). The unlock's Argon2id is the reason: in `browser-bench` item 1 on
/// this AMD EPYC machine the unlock task went from 1.49–1.70× native `Vault::open` to
/// 1.25–1.40× (2026-12-03, five runs each), and the wallet's wasm got smaller (423.1 -> 413.3 KiB gzip).
pub const WASM_RUSTFLAGS: &str = "-C target-feature=+simd128";

/// Debian's package with `wasm-opt`.
pub const APT_BINARYEN: &str = "binaryen";

/// Whether the build must run `wasm-opt`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WasmOpt {
    /// Fail when `wasm-opt` is missing (`ci`, `demo`, `bench`: they install it first).
    Required,
    /// Optimise when `wasm-opt` is on `PATH`, else build unoptimised with a loud warning (a
    /// developer's `cargo xtask build-web`).
    IfPresent,
}

/// `wasm-opt` on `PATH`.
pub fn find_wasm_opt() -> Option<PathBuf> {
    find_on_path("wasm-opt")
}

/// Builds the sites named in `only` (all if empty). `locked` adds `--locked` to cargo.
pub fn build_web(only: &[String], locked: bool, wasm_opt: WasmOpt) -> Result<(), String> {
    let sites: Vec<Site> = if only.is_empty() {
        SITES.to_vec()
    } else {
        only.iter()
            .map(|name| {
                SITES
                    .iter()
                    .copied()
                    .find(|s| s.name == name || s.package == name)
                    .ok_or_else(|| {
                        let known: Vec<&str> = SITES.iter().map(|s| s.name).collect();
                        format!("no site `{name}`; known sites: {}", known.join(", "))
                    })
            })
            .collect::<Result<_, _>>()?
    };
    let version = wasm_bindgen_version()?;
    println!("wasm-bindgen {version} (Cargo.lock and wasm-bindgen-cli-support agree)");

    let mut args = vec!["build", "--target", WASM_TARGET, "--profile", PROFILE];
    if locked {
        args.push("--locked");
    }
    for site in &sites {
        args.extend(["--package", site.package]);
        if let Some(first) = site.first_load {
            args.extend(["--package", first.package]);
        }
        for module in site.on_demand {
            args.extend(["--package", module.package]);
        }
    }
    // `strip = true` in the profile also drops the `target_features` section wasm-bindgen reads
    // (it then warns and guesses); strip only debug info here; wasm-bindgen drops the names.
    let env = [
        ("CARGO_PROFILE_WASM_RELEASE_STRIP", "debuginfo"),
        (
            "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS",
            WASM_RUSTFLAGS,
        ),
    ];
    run("cargo build (wasm)", &cargo(), &args, &env)?;

    let opt = find_wasm_opt();
    match (&opt, wasm_opt) {
        (Some(tool), _) => println!(
            "wasm-opt: {} ({})",
            tool.display(),
            tool_version(tool).unwrap_or_else(|| "version unknown".to_owned())
        ),
        (None, WasmOpt::Required) => {
            return Err(format!(
                "wasm-opt is not on PATH: install it with `apt-get install -y {APT_BINARYEN}` \
                 (as root; `cargo xtask ci` and `cargo xtask demo` do it when run as root)"
            ));
        }
        (None, WasmOpt::IfPresent) => eprintln!("{}", missing_wasm_opt_warning()),
    }
    for site in &sites {
        lay_out(site, opt.as_deref())?;
        if site.name == "wallet" {
            lay_out_vault()?;
        }
    }
    if opt.is_none() {
        eprintln!("{}", missing_wasm_opt_warning());
    }
    // Every site built: the tool-gate JS package and its example page too.
    if only.is_empty() {
        crate::gate_js::build(locked)?;
    }
    Ok(())
}

/// The wallet's page marks itself a wallet; its vault copy (issue 29) marks itself a vault.
pub const WALLET_ROLE: &str = r#"<meta name="tacit-role" content="wallet">"#;
/// What the vault copy's page says instead of [`WALLET_ROLE`].
pub const VAULT_ROLE: &str = r#"<meta name="tacit-role" content="vault">"#;

/// `target/site/vault`: the wallet's files with its page marked a vault (it then registers no
/// WebMCP tool and serves its paired bridges; `web/src/link.rs`).
fn lay_out_vault() -> Result<(), String> {
    let site = crate::target_dir().join("site");
    let (wallet, vault) = (site.join("wallet"), site.join("vault"));
    if vault.exists() {
        std::fs::remove_dir_all(&vault).map_err(|e| format!("{}: {e}", vault.display()))?;
    }
    copy_dir(&wallet, &vault)?;
    let index = vault.join("index.html");
    let page = std::fs::read_to_string(&index).map_err(|e| format!("{}: {e}", index.display()))?;
    let marked = vault_page(&page)?;
    std::fs::write(&index, marked).map_err(|e| format!("{}: {e}", index.display()))?;
    println!("vault: {} (the wallet, marked a vault)", vault.display());
    Ok(())
}

/// The wallet's page marked a vault; an error when it carries no (or more than one) role mark.
pub fn vault_page(page: &str) -> Result<String, String> {
    if page.matches(WALLET_ROLE).count() != 1 {
        return Err(format!(
            "the wallet's index.html must hold `{WALLET_ROLE}` once"
        ));
    }
    Ok(page.replace(WALLET_ROLE, VAULT_ROLE))
}

fn missing_wasm_opt_warning() -> String {
    let line = "!".repeat(78);
    format!(
        "{line}\n!! WARNING: no `wasm-opt` on PATH: the wasm below is NOT optimised and is much \n!! \
         larger than what ships. Install binaryen (`sudo apt-get install -y {APT_BINARYEN}`);\n!! \
         `cargo xtask ci` and `cargo xtask demo` install it when run as root.\n{line}"
    )
}

fn tool_version(tool: &Path) -> Option<String> {
    let out = std::process::Command::new(tool)
        .arg("--version")
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn lay_out(site: &Site, wasm_opt: Option<&Path>) -> Result<(), String> {
    let root = workspace_root();
    let input = target_dir()
        .join(WASM_TARGET)
        .join(PROFILE)
        .join(format!("{}.wasm", site.lib));
    let out = target_dir().join("site").join(site.name);
    let pkg = out.join("pkg");
    let static_dir = root.join(site.dir).join("static");
    if site.page.is_none() && !static_dir.is_dir() {
        return Err(format!(
            "{} does not exist: site `{}` needs at least an index.html there",
            static_dir.display(),
            site.name
        ));
    }
    if out.exists() {
        fs::remove_dir_all(&out).map_err(|e| format!("clearing {}: {e}", out.display()))?;
    }
    if let Some(shared) = site.shared_static {
        copy_dir(&root.join(shared), &out)?;
    }
    if static_dir.is_dir() {
        copy_dir(&static_dir, &out)?;
    }
    copy_webmcp_files(&root, &out)?;
    write_boot_js(&root, site, &out)?;
    if let Some(page) = site.page {
        write_site_page(&root, page, &out)?;
    }

    bindgen_web(&input, site.lib, false, &pkg)?;

    let wasm = pkg.join(format!("{}_bg.wasm", site.lib));
    let before = Size::of(&wasm)?;
    if let Some(tool) = wasm_opt {
        optimise(tool, &wasm)?;
    }
    let wasm_size = Size::of(&wasm)?;
    let js_size = Size::of(&pkg.join(format!("{}.js", site.lib)))?;
    match wasm_opt {
        Some(_) => println!(
            "{}: pkg/{}_bg.wasm {} raw, {} gzip before wasm-opt; {} raw, {} gzip after wasm-opt {}",
            site.name,
            site.lib,
            kib(before.raw),
            kib(before.gzip),
            kib(wasm_size.raw),
            kib(wasm_size.gzip),
            WASM_OPT_LEVEL
        ),
        None => println!(
            "{}: pkg/{}_bg.wasm {} raw, {} gzip (NOT optimised: no wasm-opt)",
            site.name,
            site.lib,
            kib(wasm_size.raw),
            kib(wasm_size.gzip)
        ),
    }
    println!(
        "{}: glue pkg/{}.js {} raw, {} gzip",
        site.name,
        site.lib,
        kib(js_size.raw),
        kib(js_size.gzip)
    );
    let first_load = match site.first_load {
        Some(first) => Some(lay_out_first_load(site, &first, &pkg, wasm_opt)?),
        None => None,
    };
    let mut on_demand = Vec::new();
    for module in site.on_demand {
        let size = lay_out_module(module.lib, &pkg, wasm_opt)?;
        println!(
            "{}: on demand ({}) pkg/{}_bg.wasm {} raw, {} gzip; glue {} raw, {} gzip",
            site.name,
            module.when,
            module.lib,
            kib(size.wasm.raw),
            kib(size.wasm.gzip),
            kib(size.js.raw),
            kib(size.js.gzip),
        );
        on_demand.push((*module, size));
    }
    let json = size_json(
        site,
        &before,
        &wasm_size,
        &js_size,
        wasm_opt.is_some(),
        first_load.as_ref(),
        &on_demand,
    );
    let size_path = out.join("size.json");
    fs::write(&size_path, json).map_err(|e| format!("writing {}: {e}", size_path.display()))?;
    println!("{}: {}", site.name, out.display());
    Ok(())
}

/// The sizes of a page's first-load module, as shipped.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FirstLoadSize {
    lib: &'static str,
    wasm: Size,
    js: Size,
}

/// wasm-bindgen (and `wasm-opt`) on the site's first-load module, into the same `pkg`.
fn lay_out_first_load(
    site: &Site,
    first: &FirstLoad,
    pkg: &Path,
    wasm_opt: Option<&Path>,
) -> Result<FirstLoadSize, String> {
    let size = lay_out_module(first.lib, pkg, wasm_opt)?;
    println!(
        "{}: first load pkg/{}_bg.wasm {} raw, {} gzip{}; glue {} raw, {} gzip (pkg/{}_bg.wasm \
         loads on first use)",
        site.name,
        first.lib,
        kib(size.wasm.raw),
        kib(size.wasm.gzip),
        if wasm_opt.is_some() {
            ""
        } else {
            " (NOT optimised: no wasm-opt)"
        },
        kib(size.js.raw),
        kib(size.js.gzip),
        site.lib
    );
    Ok(size)
}

/// wasm-bindgen (and `wasm-opt`) on one more module of a page, into its `pkg`.
fn lay_out_module(
    lib: &'static str,
    pkg: &Path,
    wasm_opt: Option<&Path>,
) -> Result<FirstLoadSize, String> {
    let input = target_dir()
        .join(WASM_TARGET)
        .join(PROFILE)
        .join(format!("{lib}.wasm"));
    bindgen_web(&input, lib, false, pkg)?;
    let wasm = pkg.join(format!("{lib}_bg.wasm"));
    if let Some(tool) = wasm_opt {
        optimise(tool, &wasm)?;
    }
    Ok(FirstLoadSize {
        lib,
        wasm: Size::of(&wasm)?,
        js: Size::of(&pkg.join(format!("{lib}.js")))?,
    })
}

/// `size.json`: `wasm` is the file that ships (after `wasm-opt` when `wasm_opt` is true),
/// `wasm_before_opt` the wasm-bindgen output it came from; `first_load`, for a page that loads
/// `wasm` only on first use, the module it loads at once; `on_demand`, the modules it loads only
/// when a person needs them.
fn size_json(
    site: &Site,
    before: &Size,
    wasm: &Size,
    js: &Size,
    optimised: bool,
    first_load: Option<&FirstLoadSize>,
    on_demand: &[(OnDemand, FirstLoadSize)],
) -> String {
    let json = serde_json::json!({
        "site": site.name,
        "package": site.package,
        "wasm": {
            "file": format!("pkg/{}_bg.wasm", site.lib),
            "raw_bytes": wasm.raw,
            "gzip_bytes": wasm.gzip,
        },
        "wasm_before_opt": { "raw_bytes": before.raw, "gzip_bytes": before.gzip },
        "js": {
            "file": format!("pkg/{}.js", site.lib),
            "raw_bytes": js.raw,
            "gzip_bytes": js.gzip,
        },
        "wasm_opt": optimised,
        "wasm_opt_level": optimised.then_some(WASM_OPT_LEVEL),
        "first_load": first_load.map(module_json),
        "on_demand": on_demand.iter().map(|(m, f)| {
            let mut json = module_json(f);
            json["when"] = m.when.into();
            json
        }).collect::<Vec<_>>(),
    });
    let mut text = serde_json::to_string_pretty(&json).unwrap_or_default();
    text.push('\n');
    text
}

/// One more module of a page in `size.json`: its wasm and its glue.
fn module_json(module: &FirstLoadSize) -> serde_json::Value {
    serde_json::json!({
        "wasm": {
            "file": format!("pkg/{}_bg.wasm", module.lib),
            "raw_bytes": module.wasm.raw,
            "gzip_bytes": module.wasm.gzip,
        },
        "js": {
            "file": format!("pkg/{}.js", module.lib),
            "raw_bytes": module.js.raw,
            "gzip_bytes": module.js.gzip,
        },
    })
}

/// Runs `wasm-opt` in place. A failure is an error: a `wasm-opt` too old for the module's
/// features must be replaced, not silently skipped.
pub(crate) fn optimise(tool: &Path, wasm: &Path) -> Result<(), String> {
    let tmp = wasm.with_extension("opt.wasm");
    let mut command = std::process::Command::new(tool);
    command
        .arg(WASM_OPT_LEVEL)
        .args(WASM_OPT_TUNING)
        .args(WASM_OPT_FEATURES)
        .arg(wasm)
        .arg("-o")
        .arg(&tmp);
    let status = command
        .status()
        .map_err(|e| format!("could not start {}: {e}", tool.display()))?;
    if !status.success() {
        let _ = fs::remove_file(&tmp);
        return Err(format!(
            "{} {WASM_OPT_LEVEL} {} {} on {} failed ({status})",
            tool.display(),
            WASM_OPT_TUNING.join(" "),
            WASM_OPT_FEATURES.join(" "),
            wasm.display()
        ));
    }
    let mut bytes = fs::read(&tmp).map_err(|e| format!("reading {}: {e}", tmp.display()))?;
    let _ = fs::remove_file(&tmp);
    if fix_externref_export(&mut bytes)? {
        eprintln!(
            "note: {} exported `{EXTERNREF_EXPORT}` as the funcref table (a binaryen 108 bug); \
             pointed the export back at the externref table",
            tool.display()
        );
    }
    fs::write(wasm, bytes).map_err(|e| format!("writing {}: {e}", wasm.display()))
}

/// The table wasm-bindgen's glue stores JS values in (`wasm.__wbindgen_externrefs.set(...)`).
const EXTERNREF_EXPORT: &str = "__wbindgen_externrefs";

/// Binaryen 108 (Debian bookworm's) writes a module with a funcref and an externref table so
/// that the export of the externref table names table 0, the funcref one; the page then fails
/// at start (`WebAssembly.Table.set(): Argument 1 is invalid for table`). This checks the
/// export of [`EXTERNREF_EXPORT`] and, if it names a table that is not externref, points it at
/// the module's only externref table. Returns whether it patched; an error if the module is not
/// one it can read or the export cannot be made right.
fn fix_externref_export(wasm: &mut [u8]) -> Result<bool, String> {
    const EXTERNREF: u8 = 0x6f;
    if wasm.get(..8) != Some(b"\0asm\x01\0\0\0".as_slice()) {
        return Err("not a wasm module (version 1)".to_owned());
    }
    let mut tables: Vec<u8> = Vec::new();
    let mut export: Option<(usize, usize, u32)> = None; // (offset of the index, its length, index)
    let mut at = 8;
    while at < wasm.len() {
        let id = wasm[at];
        let mut r = Reader {
            bytes: wasm,
            at: at + 1,
        };
        let size = r.leb()? as usize;
        let start = r.at;
        let end = start
            .checked_add(size)
            .filter(|end| *end <= wasm.len())
            .ok_or("a section runs past the end of the module")?;
        match id {
            2 => {
                for _ in 0..r.leb()? {
                    r.name()?;
                    r.name()?;
                    match r.byte()? {
                        0 => drop(r.leb()?),
                        1 => {
                            tables.push(r.byte()?);
                            r.limits()?;
                        }
                        2 => r.limits()?,
                        3 => drop((r.byte()?, r.byte()?)),
                        kind => return Err(format!("unknown import kind {kind}")),
                    }
                }
            }
            4 => {
                for _ in 0..r.leb()? {
                    tables.push(r.byte()?);
                    r.limits()?;
                }
            }
            7 => {
                for _ in 0..r.leb()? {
                    let name = r.name()?;
                    let kind = r.byte()?;
                    let index_at = r.at;
                    let index = r.leb()?;
                    if kind == 1 && r.bytes[name] == *EXTERNREF_EXPORT.as_bytes() {
                        export = Some((index_at, r.at - index_at, index));
                    }
                }
            }
            _ => {}
        }
        at = end;
    }
    let Some((index_at, len, index)) = export else {
        return Ok(false); // no wasm-bindgen externref table: nothing to check
    };
    if tables.get(index as usize) == Some(&EXTERNREF) {
        return Ok(false);
    }
    let externrefs: Vec<usize> = (0..tables.len())
        .filter(|i| tables[*i] == EXTERNREF)
        .collect();
    match externrefs.as_slice() {
        [only] if len == 1 && *only < 0x80 => {
            wasm[index_at] = *only as u8;
            Ok(true)
        }
        _ => Err(format!(
            "`{EXTERNREF_EXPORT}` names table {index}, which is not externref, and there is \
             no single externref table to point it at (tables: {tables:02x?})"
        )),
    }
}

/// A cursor over a wasm module's bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8, String> {
        let b = *self
            .bytes
            .get(self.at)
            .ok_or("the module ends in the middle of a section")?;
        self.at += 1;
        Ok(b)
    }

    /// An unsigned LEB128 of at most 32 bits.
    fn leb(&mut self) -> Result<u32, String> {
        let mut value: u64 = 0;
        for shift in (0..35).step_by(7) {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return u32::try_from(value).map_err(|_| "a LEB128 over 32 bits".to_owned());
            }
        }
        Err("a LEB128 longer than 5 bytes".to_owned())
    }

    /// A name: its byte range in the module.
    fn name(&mut self) -> Result<std::ops::Range<usize>, String> {
        let len = self.leb()? as usize;
        let start = self.at;
        let end = start
            .checked_add(len)
            .filter(|end| *end <= self.bytes.len())
            .ok_or("a name runs past the end of the module")?;
        self.at = end;
        Ok(start..end)
    }

    /// Table or memory limits: a flag byte, the minimum, and the maximum if flagged.
    fn limits(&mut self) -> Result<(), String> {
        let flags = self.byte()?;
        self.leb()?;
        if flags & 1 == 1 {
            self.leb()?;
        }
        Ok(())
    }
}

/// A file's size, raw and gzip (best).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Size {
    pub(crate) raw: u64,
    pub(crate) gzip: u64,
}

impl Size {
    pub(crate) fn of(path: &Path) -> Result<Self, String> {
        let bytes = fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(&bytes).map_err(|e| format!("gzip: {e}"))?;
        let gzip = gz.finish().map_err(|e| format!("gzip: {e}"))?.len() as u64;
        Ok(Self {
            raw: bytes.len() as u64,
            gzip,
        })
    }
}

pub(crate) fn kib(bytes: u64) -> String {
    format!("{:.1} KiB", bytes as f64 / 1024.0)
}

/// Copies [`WEBMCP_FILES`] into a site's output `out`.
fn copy_webmcp_files(root: &Path, out: &Path) -> Result<(), String> {
    for (from, to) in WEBMCP_FILES {
        let (from, to) = (root.join(from), out.join(to));
        if let Some(dir) = to.parent() {
            fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        }
        fs::copy(&from, &to).map_err(|e| {
            format!(
                "copying {} to {}: {e} (the vendored WebMCP polyfill and its loader ship with \
                 every page)",
                from.display(),
                to.display()
            )
        })?;
    }
    Ok(())
}

/// Copies the directory `from` into `to`, recursively (files in `to` with the same names are
/// replaced).
pub(crate) fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    fs::create_dir_all(to).map_err(|e| format!("creating {}: {e}", to.display()))?;
    let entries = fs::read_dir(from).map_err(|e| format!("reading {}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("reading {}: {e}", from.display()))?;
        let target = to.join(entry.file_name());
        let kind = entry
            .file_type()
            .map_err(|e| format!("{}: {e}", entry.path().display()))?;
        if kind.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target)
                .map_err(|e| format!("copying {}: {e}", entry.path().display()))?;
        }
    }
    Ok(())
}

fn find_on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// The single `wasm-bindgen` version in Cargo.lock, checked equal to the locked
/// `wasm-bindgen-cli-support` (the library this xtask was built with).
pub fn wasm_bindgen_version() -> Result<String, String> {
    let path = workspace_root().join("Cargo.lock");
    let lock = fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    check_versions(&lock)
}

fn check_versions(lock: &str) -> Result<String, String> {
    let support = locked_versions(lock, "wasm-bindgen-cli-support");
    let crate_versions = locked_versions(lock, "wasm-bindgen");
    let [support] = support.as_slice() else {
        return Err(format!(
            "expected one wasm-bindgen-cli-support in Cargo.lock, found {support:?}"
        ));
    };
    match crate_versions.as_slice() {
        [] => Err(
            "Cargo.lock has no `wasm-bindgen`: the web crate must depend on \
                   `wasm-bindgen = \"=<version>\"` before `build-web` can run"
                .to_owned(),
        ),
        [one] if one == support => Ok(one.clone()),
        [one] => Err(format!(
            "wasm-bindgen version mismatch: Cargo.lock has wasm-bindgen {one} but xtask uses \
             wasm-bindgen-cli-support {support}. The generated JS only works with the exact same \
             version: pin `wasm-bindgen = \"={support}\"` in the root Cargo.toml's \
             [workspace.dependencies], or change the \
             `wasm-bindgen-cli-support = \"={one}\"` pin in xtask/Cargo.toml, then `cargo update`."
        )),
        many => Err(format!(
            "Cargo.lock has several wasm-bindgen versions {many:?}; every wasm crate must use \
             `wasm-bindgen.workspace = true` (pinned `=\"{support}\"` in the root Cargo.toml)"
        )),
    }
}

/// Versions of package `name` in a Cargo.lock (v3/v4 format).
fn locked_versions(lock: &str, name: &str) -> Vec<String> {
    let mut versions = Vec::new();
    for block in lock.split("[[package]]").skip(1) {
        let field = |key: &str| {
            block.lines().find_map(|line| {
                let value = line
                    .strip_prefix(key)?
                    .trim_start()
                    .strip_prefix('=')?
                    .trim();
                Some(value.trim_matches('"').to_owned())
            })
        };
        if field("name").as_deref() == Some(name)
            && let Some(version) = field("version")
        {
            versions.push(version);
        }
    }
    versions
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCK: &str = r#"
version = 4

[[package]]
name = "wasm-bindgen"
version = "0.2.130"
source = "registry+https://github.com/rust-lang/crates.io-index"

[[package]]
name = "wasm-bindgen-cli-support"
version = "0.2.130"

[[package]]
name = "wasm-bindgen-shared"
version = "0.2.130"
"#;

    #[test]
    fn matching_versions_pass() {
        assert_eq!(check_versions(LOCK).unwrap(), "0.2.130");
    }

    #[test]
    fn mismatch_is_explained() {
        let lock = LOCK.replacen("0.2.130", "0.2.129", 1);
        let err = check_versions(&lock).unwrap_err();
        assert!(
            err.contains("mismatch") && err.contains("0.2.129") && err.contains("=0.2.130"),
            "{err}"
        );
    }

    #[test]
    fn missing_crate_is_explained() {
        let lock = LOCK.replace("name = \"wasm-bindgen\"\n", "name = \"other\"\n");
        assert!(
            check_versions(&lock)
                .unwrap_err()
                .contains("has no `wasm-bindgen`")
        );
    }

    #[test]
    fn two_versions_are_refused() {
        let lock = format!("{LOCK}\n[[package]]\nname = \"wasm-bindgen\"\nversion = \"0.2.99\"\n");
        assert!(check_versions(&lock).unwrap_err().contains("several"));
    }

    #[test]
    fn the_real_lock_pins_cli_support_exactly_like_the_manifest() {
        let manifest = include_str!("../Cargo.toml");
        let lock = fs::read_to_string(workspace_root().join("Cargo.lock")).unwrap();
        let [locked] = locked_versions(&lock, "wasm-bindgen-cli-support")
            .try_into()
            .unwrap();
        assert!(manifest.contains(&format!("wasm-bindgen-cli-support = \"={locked}\"")));
    }

    #[test]
    fn size_json_keeps_the_shipped_size_under_wasm_and_the_one_before_opt_beside_it() {
        let site = SITES[0];
        let size = |raw, gzip| Size { raw, gzip };
        let parse = |text: String| serde_json::from_str::<serde_json::Value>(&text).unwrap();
        let json = parse(size_json(
            &site,
            &size(900, 300),
            &size(500, 200),
            &size(40, 9),
            true,
            Some(&FirstLoadSize {
                lib: "tacit_wallet_boot",
                wasm: size(70, 30),
                js: size(8, 3),
            }),
            &[(
                site.on_demand[0],
                FirstLoadSize {
                    lib: "tacit_wallet_strength",
                    wasm: size(2000, 800),
                    js: size(6, 2),
                },
            )],
        ));
        assert_eq!(
            json["on_demand"][0]["wasm"],
            serde_json::json!({ "file": "pkg/tacit_wallet_strength_bg.wasm", "raw_bytes": 2000, "gzip_bytes": 800 })
        );
        assert_eq!(json["on_demand"][0]["when"], site.on_demand[0].when);
        assert_eq!(
            json["first_load"]["wasm"],
            serde_json::json!({ "file": "pkg/tacit_wallet_boot_bg.wasm", "raw_bytes": 70, "gzip_bytes": 30 })
        );
        assert_eq!(json["first_load"]["js"]["file"], "pkg/tacit_wallet_boot.js");
        assert_eq!(
            json["wasm"],
            serde_json::json!({ "file": "pkg/tacit_web_bg.wasm", "raw_bytes": 500, "gzip_bytes": 200 })
        );
        assert_eq!(
            json["wasm_before_opt"],
            serde_json::json!({ "raw_bytes": 900, "gzip_bytes": 300 })
        );
        assert_eq!(json["js"]["file"], "pkg/tacit_web.js");
        assert_eq!(json["js"]["raw_bytes"], 40);
        assert_eq!(json["wasm_opt"], true);
        assert_eq!(json["wasm_opt_level"], "-Oz");
        let plain = parse(size_json(
            &site,
            &size(900, 300),
            &size(900, 300),
            &size(40, 9),
            false,
            None,
            &[],
        ));
        assert!(plain["first_load"].is_null(), "{plain}");
        assert_eq!(plain["on_demand"], serde_json::json!([]));
        assert_eq!(plain["wasm_opt"], false);
        assert!(plain["wasm_opt_level"].is_null(), "{plain}");
    }

    #[test]
    fn a_failing_wasm_opt_is_an_error_and_leaves_the_input_alone() {
        let dir = std::env::temp_dir().join(format!("xtask-opt-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let wasm = dir.join("x_bg.wasm");
        fs::write(&wasm, b"\0asm\x01\0\0\0").unwrap();
        // `false` fails; `true` succeeds without writing the output file.
        for tool in ["/bin/false", "/bin/true"] {
            let err = optimise(Path::new(tool), &wasm).unwrap_err();
            assert!(err.contains(tool) || err.contains("reading"), "{err}");
            assert_eq!(fs::read(&wasm).unwrap(), b"\0asm\x01\0\0\0");
            assert!(!dir.join("x_bg.opt.wasm").exists());
        }
        let err = optimise(&dir.join("no-such-wasm-opt"), &wasm).unwrap_err();
        assert!(err.contains("could not start"), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A module with a funcref table 0 and an externref table 1, exporting `export_index` as
    /// `__wbindgen_externrefs` (and the memory, to have a second export).
    fn two_tables(export_index: u8) -> Vec<u8> {
        let mut m = b"\0asm\x01\0\0\0".to_vec();
        // table section: 2 tables: funcref min 1 max 1; externref min 4.
        m.extend([4, 8, 2, 0x70, 1, 1, 1, 0x6f, 0, 4]);
        m.extend([5, 3, 1, 0, 1]); // memory section: one memory, min 1
        let name = b"__wbindgen_externrefs";
        let mut exports = vec![2, 6];
        exports.extend(b"memory");
        exports.extend([2, 0, name.len() as u8]);
        exports.extend(name);
        exports.extend([1, export_index]);
        m.push(7);
        m.push(exports.len() as u8);
        m.extend(exports);
        m
    }

    #[test]
    fn the_externref_export_is_pointed_back_at_the_externref_table() {
        let mut broken = two_tables(0);
        assert!(fix_externref_export(&mut broken).unwrap());
        assert_eq!(broken, two_tables(1));
        // A right module is left alone, byte for byte.
        let mut right = two_tables(1);
        assert!(!fix_externref_export(&mut right).unwrap());
        assert_eq!(right, two_tables(1));
    }

    #[test]
    fn an_unfixable_or_unreadable_module_is_an_error() {
        // Both tables funcref: nothing to point the export at.
        let mut no_externref = two_tables(0);
        no_externref[15] = 0x70;
        let err = fix_externref_export(&mut no_externref).unwrap_err();
        assert!(err.contains("not externref"), "{err}");
        // Cut short in the export section.
        let mut cut = two_tables(0);
        cut.truncate(cut.len() - 3);
        assert!(fix_externref_export(&mut cut).is_err());
        assert!(fix_externref_export(&mut b"\0asm\x02\0\0\0".to_vec()).is_err());
        // A module without the export is fine as it is.
        let mut plain = b"\0asm\x01\0\0\0".to_vec();
        assert!(!fix_externref_export(&mut plain).unwrap());
    }

    #[test]
    fn every_page_gets_the_polyfill_its_licence_and_the_loader() {
        let root = workspace_root();
        let dir = std::env::temp_dir().join(format!("xtask-webmcp-{}", std::process::id()));
        copy_webmcp_files(&root, &dir).unwrap();
        for (from, to) in WEBMCP_FILES {
            assert_eq!(
                fs::read(dir.join(to)).unwrap(),
                fs::read(root.join(from)).unwrap(),
                "{to}"
            );
        }
        // The loader asks for the file where it is laid out.
        let loader = fs::read_to_string(dir.join("webmcp.js")).unwrap();
        assert!(loader.contains("'./vendor/webmcp-polyfill.js'"));
        // Every page's boot.js, written from its template, goes through the loader before its
        // own wasm module starts; a split page's loads its first-load module, and its own
        // module only by a dynamic import.
        for site in SITES {
            let template = fs::read_to_string(root.join(boot_template(site))).unwrap();
            let boot = boot_js(&template, site).unwrap();
            assert!(
                boot.contains("import { ensureWebmcp } from './webmcp.js';")
                    && boot.contains(&format!("'{} could not start: '", site.who))
                    && !boot.contains("__"),
                "{}: {boot}",
                site.name
            );
            match site.first_load {
                None => assert!(
                    boot.contains("ensureWebmcp()\n  .then(() => init())")
                        && boot.contains(&format!("import init from './pkg/{}.js';", site.lib)),
                    "{}: {boot}",
                    site.name
                ),
                Some(first) => {
                    assert!(
                        boot.contains(&format!("from './pkg/{}.js';", first.lib))
                            && boot.contains(&format!("import('./pkg/{}.js')", site.lib))
                            && !boot.contains(&format!("from './pkg/{}.js'", site.lib)),
                        "{}: {boot}",
                        site.name
                    );
                }
            }
            // No page ships a boot.js of its own that would stand beside the written one.
            assert!(
                !root.join(site.dir).join("static/boot.js").exists(),
                "{}",
                site.name
            );
        }
        let (wallet, housing) = (SITES[0], SITES[1]);
        assert!(boot_js("import init from './pkg/__MODULE__.js';", &housing).is_err());
        assert!(boot_js("__MODULE__ __WHO__ __WHO__", &housing).is_err());
        assert!(boot_js("__MODULE__ __WHO__ __BOOT__", &housing).is_err());
        assert!(boot_js("__MODULE__ __WHO__", &wallet).is_err());
        assert!(boot_js("__MODULE__ __WHO__ __BOOT__", &wallet).is_ok());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn every_relying_site_page_is_written_whole_from_the_template() {
        let root = workspace_root();
        let template = fs::read_to_string(root.join(SITE_PAGE)).unwrap();
        let mut pages = Vec::new();
        for site in SITES {
            let Some(page) = site.page else { continue };
            let html = site_page(&template, &fs::read_to_string(root.join(page)).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", site.name));
            assert!(html.starts_with("<!doctype html>\n"), "{}", site.name);
            assert!(html.contains(r#"<script type="module" src="boot.js"></script>"#));
            assert!(html.contains(r#"<ul id="requirements" class="requirements"></ul>"#));
            assert!(
                !html.contains("{{") && !html.contains("<!-- slot"),
                "{html}"
            );
            pages.push(html);
        }
        assert!(pages.len() >= 2);
        assert!(pages.windows(2).all(|w| w[0] != w[1]));
    }

    #[test]
    fn a_site_page_with_a_slot_missing_twice_or_unknown_is_refused() {
        let template = "<title>{{title}}</title><h1>{{heading}}</h1>";
        let both = "a comment\n<!-- slot title -->\nT\n<!-- slot heading -->\nH\n";
        assert_eq!(
            site_page(template, both).unwrap(),
            "<title>T</title><h1>H</h1>"
        );
        // A value of several lines keeps all but its last newline.
        assert_eq!(
            site_page("[{{title}}]", "<!-- slot title -->\na\nb\n").unwrap(),
            "[a\nb]"
        );
        let missing = site_page(template, "<!-- slot title -->\nT\n").unwrap_err();
        assert!(missing.contains("`heading`"), "{missing}");
        let twice = site_page(template, &format!("{both}<!-- slot title -->\nU\n")).unwrap_err();
        assert!(twice.contains("twice"), "{twice}");
        let unknown = site_page(template, &format!("{both}<!-- slot other -->\nO\n")).unwrap_err();
        assert!(unknown.contains("`other`"), "{unknown}");
    }

    #[test]
    fn the_vault_copy_marks_the_wallets_page_a_vault_once() {
        let page =
            std::fs::read_to_string(crate::workspace_root().join("web/static/index.html")).unwrap();
        let vault = vault_page(&page).unwrap();
        assert!(vault.contains(VAULT_ROLE) && !vault.contains(WALLET_ROLE));
        assert_eq!(
            vault.len(),
            page.len() - WALLET_ROLE.len() + VAULT_ROLE.len()
        );
        assert!(vault_page("<html></html>").is_err());
        assert!(vault_page(&format!("{WALLET_ROLE}{WALLET_ROLE}")).is_err());
    }

    #[test]
    fn sites_are_unique() {
        for (i, a) in SITES.iter().enumerate() {
            for b in &SITES[i + 1..] {
                assert!(a.name != b.name && a.package != b.package);
            }
        }
    }
}
