//! `cargo xtask demo`: the signer, two credential issuers (a tax office vouching for income, a
//! civil registry vouching for age), the wallet page, the vault and the bridge with their relay,
//! the housing site and the pharmacy on loopback, with the Chromium command line to open them and a one-time code per demo person at
//! each issuer; `--agent` also runs a scripted agent through the DevTools `WebMCP` domain. Stops
//! everything on Ctrl-C.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use tacit_e2e::agent::{self, Person, SiteTools};
use tacit_e2e::issuer_proc::{CIVIL_REGISTRY, IssuerSetup, TAX_OFFICE, TestIssuer};
use tacit_e2e::{Browser, LaunchOptions, StaticServer};
use tacit_issuer::Attribute;

const SIGNER: &str = "127.0.0.1:8787";
/// The tax office (income); `examples/housing/site.toml` trusts it.
const TAX: &str = "127.0.0.1:8791";
/// The civil registry (birth date); `examples/pharmacy/site.toml` trusts it.
const REGISTRY: &str = "127.0.0.1:8792";
const WALLET: &str = "127.0.0.1:8080";
/// The wallet as the person's vault (issue 29): registers no tool, serves its paired bridges.
const VAULT: &str = "127.0.0.1:8090";
/// The bridge: the agent's page of the vault's tools, holding nothing.
const BRIDGE: &str = "127.0.0.1:8089";
/// `tacit-relay`, in this process: carries the vault's and bridges' ciphertext.
const RELAY: &str = "127.0.0.1:8795";
/// The tool-gate JS package's example page (a secure context: served as `localhost`).
const GATE_EXAMPLE: &str = "127.0.0.1:8083";
const DEBUG_PORT: u16 = 9222;

/// Runs the Tacit demo on loopback: the signer, two credential issuers, the wallet page, the
/// housing site and the pharmacy, and prints the Chromium command line to open them. Stops
/// everything on Ctrl-C.
#[derive(Debug, Parser)]
#[command(name = "tacit-demo", version)]
struct Options {
    /// Also run a scripted agent through the DevTools WebMCP domain.
    #[arg(long)]
    agent: bool,
    /// Run the agent in a headless Chromium of its own (the bridge and the site) paired with a
    /// second headless Chromium as the person's device (the vault), with a scripted stand-in
    /// for the person approving in the vault, and stop when it is done (needs --agent).
    #[arg(long, requires = "agent")]
    auto_approve: bool,
    /// The agent applies at the pharmacy instead of the housing site (with --agent).
    #[arg(long)]
    pharmacy: bool,
}

fn main() -> ExitCode {
    match run(Options::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("demo: {e}");
            ExitCode::FAILURE
        }
    }
}

fn addr(text: &str) -> SocketAddr {
    text.parse()
        .unwrap_or(SocketAddr::from(([127, 0, 0, 1], 0)))
}

fn run(options: Options) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    // The signer's key lives under target/demo/ and is made once.
    let key_file: PathBuf = tacit_e2e::target_dir().join("demo").join("signer.key");
    if !key_file.exists() {
        std::fs::create_dir_all(key_file.parent().unwrap_or(&key_file))
            .map_err(|e| e.to_string())?;
        let id =
            signer::keygen(&key_file, signer::system_now(), false).map_err(|e| e.to_string())?;
        println!("made a signer key {id} in {}", key_file.display());
    }
    let keys = signer::KeyStore::load(&key_file).map_err(|e| e.to_string())?;
    // The page is addressed as localhost (WebAuthn needs a domain); it listens on 127.0.0.1.
    let wallet_origin = format!("http://localhost:{}", addr(WALLET).port());
    let config = signer::Config {
        listen: addr(SIGNER),
        key_file: key_file.clone(),
        allowed_origins: vec![
            wallet_core::Origin::parse(&wallet_origin).map_err(|e| e.to_string())?,
            wallet_core::Origin::parse(&format!("http://localhost:{}", addr(VAULT).port()))
                .map_err(|e| e.to_string())?,
        ],
        ..signer::Config::default()
    };
    // Enrolled installs live in the signer's database (SQLite next to its key).
    let signer_db_path = tacit_e2e::target_dir().join("demo").join("signer.db");
    let signer_db = runtime
        .block_on(signer::SignerDb::open(&tacit_store::sqlite_url(
            &signer_db_path,
        )))
        .map_err(|e| format!("the signer's database {}: {e}", signer_db_path.display()))?;
    let code = runtime
        .block_on(signer::enrol_code(
            &signer_db,
            "demo wallet",
            std::time::Duration::from_secs(24 * 3600),
            signer::system_now(),
        ))
        .map_err(|e| e.to_string())?;
    let state = signer::AppState::new(keys, signer_db, &config, signer::SystemClock);
    let (stop_signer, signer_stopped) = tokio::sync::oneshot::channel::<()>();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(config.listen))
        .map_err(|e| format!("the signer cannot listen on {SIGNER}: {e}"))?;
    let signer_task = runtime.spawn(signer::serve(listener, state, async {
        let _ = signer_stopped.await;
    }));

    // The issuers: keys and databases under target/demo/, made once; everyone on record gets a
    // fresh one-time code at every start (the demo people are seeded on the first).
    let issuer = |attribute: Attribute, name: &str, listen: &str, file: &str| {
        let demo = tacit_e2e::target_dir().join("demo");
        TestIssuer::start_with(IssuerSetup {
            attribute,
            name: name.to_owned(),
            listen: addr(listen),
            key_file: Some(demo.join(format!("{file}.key"))),
            database: Some(demo.join(format!("{file}.db"))),
        })
        .map_err(|e| format!("the {name} cannot start on {listen}: {e}"))
    };
    let tax = issuer(Attribute::Income, TAX_OFFICE, TAX, "tax-office")?;
    let registry = issuer(
        Attribute::BirthDate,
        CIVIL_REGISTRY,
        REGISTRY,
        "civil-registry",
    )?;

    let wallet_dir = tacit_e2e::site_dir("wallet").map_err(|e| e.to_string())?;
    let wallet = StaticServer::start_on(wallet_dir, addr(WALLET))
        .map_err(|e| format!("the wallet cannot listen on {WALLET}: {e}"))?;
    // The relying sites are servers with their own configuration (examples/<site>/site.toml):
    // the verdict, the nonce table (SQLite under target/site-data/) and the trusted signer.
    let start_site = |name: &str| -> Result<tacit_site::server::RunningSite, String> {
        let path = tacit_e2e::workspace_root()
            .join("examples")
            .join(name)
            .join("site.toml");
        let mut config =
            tacit_site::server::Config::load(&path).map_err(|e| format!("{name}: {e}"))?;
        config.static_dir = tacit_e2e::site_dir(name).map_err(|e| e.to_string())?;
        runtime
            .block_on(tacit_site::server::spawn(&config))
            .map_err(|e| format!("{name}: {e}"))
    };
    let housing = start_site("housing")?;
    let pharmacy = start_site("pharmacy")?;
    let signer_url = format!("http://{SIGNER}");
    // The wallet page may connect to these services and to nothing else (its CSP's
    // connect-src; the issuers let themselves in when they start).
    for origin in [
        signer_url.clone(),
        housing.origin().to_string(),
        pharmacy.origin().to_string(),
    ] {
        tacit_e2e::server::allow_connect(&origin);
    }
    // The relay, the vault and the bridge (issue 29): the person's vault on its own origin, the
    // agent's bridge on another, paired through the relay by the code the bridge shows.
    let relay_listener = runtime
        .block_on(tokio::net::TcpListener::bind(addr(RELAY)))
        .map_err(|e| format!("the relay cannot listen on {RELAY}: {e}"))?;
    runtime.spawn(tacit_relay::serve(
        relay_listener,
        tacit_relay::RelayState::system(),
    ));
    let relay_url = format!("http://{RELAY}");
    tacit_e2e::server::allow_connect(&format!("ws://{RELAY}"));
    tacit_e2e::server::allow_connect(&relay_url);
    let vault_dir = tacit_e2e::site_dir("vault").map_err(|e| e.to_string())?;
    let vault = StaticServer::start_on(vault_dir, addr(VAULT))
        .map_err(|e| format!("the vault cannot listen on {VAULT}: {e}"))?;
    let bridge_dir = tacit_e2e::site_dir("bridge").map_err(|e| e.to_string())?;
    let bridge = StaticServer::start_on(bridge_dir, addr(BRIDGE))
        .map_err(|e| format!("the bridge cannot listen on {BRIDGE}: {e}"))?;
    let vault_url = format!("{}/", vault.origin());
    let bridge_url = format!("{}/", bridge.origin());
    // The tool-gate JS package's example page (a corner shop).
    let gate_dir = tacit_e2e::site_dir("gate-example").map_err(|e| e.to_string())?;
    let gate_example = StaticServer::start_on(gate_dir, addr(GATE_EXAMPLE))
        .map_err(|e| format!("the example page cannot listen on {GATE_EXAMPLE}: {e}"))?;
    let gate_example_url = format!("{}/", gate_example.origin());
    let wallet_url = format!("{}/", wallet.origin());
    let housing_url = format!("{}/", housing.origin());
    let pharmacy_url = format!("{}/", pharmacy.origin());
    println!("\nTacit demo is running on loopback:\n");
    println!(
        "  signer    {signer_url}   (keys: {signer_url}/v1/keys, key file {}, database {})",
        key_file.display(),
        signer_db_path.display()
    );
    for (label, issuer) in [("tax", &tax), ("registry", &registry)] {
        println!(
            "  {label:<9} {}   ({}, {}; keys: {}, database {})",
            issuer.origin(),
            issuer.name(),
            issuer.attribute().as_str(),
            issuer.keys_url(),
            issuer.database_path().display()
        );
    }
    println!("  wallet    {wallet_url}");
    println!(
        "  vault     {vault_url}   (the wallet as your vault on its own origin: it registers no tool)"
    );
    println!(
        "  bridge    {bridge_url}   (the agent's page of your vault's tools: it holds nothing)"
    );
    println!("  relay     {relay_url}   (tacit-relay, in memory: it carries only ciphertext)");
    println!(
        "  housing   {housing_url}   (nonces: {})",
        housing.state().nonces().db().backend()
    );
    println!(
        "  pharmacy  {pharmacy_url}   (nonces: {})",
        pharmacy.state().nonces().db().backend()
    );
    println!(
        "  gate      {gate_example_url}   (the tool-gate JS package on a tiny shop: examples/gate-page)\n"
    );
    println!(
        "Enrolment code for the wallet (Settings → Signer → Enrolment code), valid 24 hours, once:\n\n    {code}\n"
    );
    print_issuer_codes(&tax, &registry);
    println!(
        "Open them in Chromium with WebMCP on (a fresh profile; the DevTools port lets an agent drive it):\n"
    );
    println!(
        "  /usr/lib/chromium/chromium --enable-blink-features=WebMCP --user-data-dir=$(mktemp -d) \\\n      --remote-debugging-port={DEBUG_PORT} '{wallet_url}' '{housing_url}' '{pharmacy_url}' '{gate_example_url}' '{bridge_url}'\n"
    );
    println!(
        "The agent's browser holds nothing (issue 29, same-device layout): open the bridge in the \
         agent's browser ({bridge_url}) and the vault in yours, another profile or device:\n\n  \
         /usr/lib/chromium/chromium --user-data-dir=$(mktemp -d) '{vault_url}'\n\n\
         then type the code the bridge shows into the vault (Settings → Pair a bridge) and check \
         that both show the same number. The bridge's tools are the vault's; Unpair withdraws \
         them.\n"
    );
    let manifest = tacit_e2e::workspace_root().join("Cargo.toml");
    println!(
        "A desktop agent (MCP over stdio) reaches the same tools through the MCP door; add to its \
         MCP configuration:\n\n    {{ \"mcpServers\": {{ \"tacit\": {{ \"command\": \"cargo\", \"args\": \
         [\"run\", \"-q\", \"--manifest-path\", \"{}\", \"-p\", \"tacit-mcp\", \"--\", \
         \"--devtools-port\", \"{DEBUG_PORT}\", \"--origin\", \"{}\", \"--origin\", \"{}\", \
         \"--origin\", \"{}\"] }} }} }}\n",
        manifest.display(),
        wallet_url.trim_end_matches('/'),
        housing_url.trim_end_matches('/'),
        pharmacy_url.trim_end_matches('/'),
    );

    let outcome = if options.agent {
        // The stand-in adds Ana's credential from the issuer the chosen site trusts.
        let issuer = if options.pharmacy { &registry } else { &tax };
        let ana = issuer.code_for("Ana").map_err(|e| e.to_string())?;
        run_agent(
            &options,
            &Urls {
                wallet: &wallet_url,
                vault: &vault_url,
                bridge: &bridge_url,
                housing: &housing_url,
                pharmacy: &pharmacy_url,
            },
            (&signer_url, &code.to_string()),
            (&issuer.origin(), &ana),
        )
    } else {
        Ok(())
    };
    if let Err(e) = &outcome {
        eprintln!("agent: {e}");
    }
    if !options.agent || !options.auto_approve {
        println!("Press Ctrl-C to stop.");
        runtime.block_on(async {
            let _ = tokio::signal::ctrl_c().await;
        });
    }
    println!("\nstopping…");
    let _ = stop_signer.send(());
    let _ = runtime.block_on(signer_task);
    let _ = runtime.block_on(housing.shutdown());
    let _ = runtime.block_on(pharmacy.shutdown());
    drop(wallet);
    drop(vault);
    drop(bridge);
    drop(gate_example);
    drop(tax);
    drop(registry);
    println!("stopped.");
    outcome
}

/// The demo people's facts as the issuers hold them, and a one-time code for each at each
/// issuer (Settings → Credentials in the wallet: the issuer's URL and the code).
fn print_issuer_codes(tax: &TestIssuer, registry: &TestIssuer) {
    println!(
        "Credentials (wallet: Settings → Credentials → issuer URL and code; each code works once,\n\
         30 days; a restart prints new ones):\n"
    );
    for (code, person) in tax.people() {
        let income = match (person.income_minor, person.currency.as_deref()) {
            (Some(minor), Some(currency)) => format!(
                "income {}.{:02} {currency}",
                thousands(minor / 100),
                minor % 100
            ),
            _ => "no income on record".to_owned(),
        };
        let born = person.birth_date.as_deref().unwrap_or("unknown");
        let age_code = registry
            .people()
            .iter()
            .find(|(_, p)| p.name == person.name)
            .map_or("(none)", |(code, _)| code.as_str());
        println!("  {:<11} {income}, born {born}", person.name);
        println!("      {:<25} {}   {code}", tax.name(), tax.origin());
        println!(
            "      {:<25} {}   {age_code}",
            registry.name(),
            registry.origin()
        );
    }
    println!();
}

/// `28500` → `28,500`.
fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

/// The pages the agent and the person use.
struct Urls<'a> {
    wallet: &'a str,
    vault: &'a str,
    bridge: &'a str,
    housing: &'a str,
    pharmacy: &'a str,
}

fn run_agent(
    options: &Options,
    urls: &Urls<'_>,
    (signer_url, code): (&str, &str),
    (issuer_url, issuer_code): (&str, &str),
) -> Result<(), String> {
    let (site_url, tools): (&str, SiteTools) = if options.pharmacy {
        (urls.pharmacy, agent::PHARMACY)
    } else {
        (urls.housing, agent::HOUSING)
    };
    let mut say = |line: &str| println!("[agent] {line}");
    let e = |e: tacit_e2e::Error| e.to_string();
    if options.auto_approve {
        println!(
            "[agent] --auto-approve: two headless Chromiums on this machine: the person's device, \
             with the vault and a SCRIPTED STAND-IN FOR A PERSON, and the agent's, with the bridge \
             and the site; the agent's browser holds nothing of the person's"
        );
        let person_browser = Browser::launch_with(LaunchOptions::default()).map_err(e)?;
        let agent_browser = Browser::launch_with(LaunchOptions::default()).map_err(e)?;
        let mut vault = person_browser.new_page().map_err(e)?;
        vault.navigate(urls.vault).map_err(e)?;
        // The first view, then a pointer move over the page (as a person's), which loads the app.
        tacit_e2e::wallet::wait_app(&vault);
        let person = tacit_e2e::wallet::Wallet::new(vault);
        say(&format!(
            "!!! SCRIPTED STAND-IN FOR A PERSON: enrolling the vault with {signer_url} using the code above !!!"
        ));
        person.enrol(signer_url, code);
        say(
            "!!! SCRIPTED STAND-IN FOR A PERSON: creating a demo profile in the vault (income 28,400.00 EUR, born 1990-02-28, Nordhafen) !!!",
        );
        person.create_profile();
        say(&format!(
            "!!! SCRIPTED STAND-IN FOR A PERSON: adding Ana's credential from {issuer_url} with her code above (now used) !!!"
        ));
        person.add_credential(issuer_url, issuer_code);
        let mut bridge = tacit_e2e::bridge_tab::open(&agent_browser, urls.bridge).map_err(e)?;
        say(&format!(
            "!!! SCRIPTED STAND-IN FOR A PERSON: typing the code the bridge shows ({}) into the vault !!!",
            tacit_e2e::wallet::text_of(&bridge, "#typed")
        ));
        let fingerprint = tacit_e2e::bridge_tab::pair(&person, &bridge).map_err(e)?;
        say(&format!(
            "paired: the vault and the bridge both show {fingerprint}"
        ));
        let mut site = agent_browser.new_page().map_err(e)?;
        site.enable_webmcp().map_err(e)?;
        site.navigate(site_url).map_err(e)?;
        site.wait_tool(tools.requirements, std::time::Duration::from_secs(20))
            .map_err(e)?;
        let answer = agent::run_flow_via(
            &mut bridge,
            Some(&person.page),
            &mut site,
            tools,
            Person::ScriptedStandIn,
            &mut say,
        )
        .map_err(e)?;
        say(&format!("site answered: {answer}"));
        return Ok(());
    }
    println!(
        "[agent] attaching to your Chromium on 127.0.0.1:{DEBUG_PORT} (start it with the command above)…"
    );
    let browser = Browser::connect(DEBUG_PORT).map_err(e)?;
    // The bridge when it is open (the vault is elsewhere), else the wallet page itself.
    let bridge_origin = urls.bridge.trim_end_matches('/');
    let wallet_origin = urls.wallet.trim_end_matches('/');
    let mut wallet = match browser.attach(bridge_origin) {
        Ok(page) => {
            say("using the bridge: your vault decides, in its own page");
            page
        }
        Err(_) => browser.attach(wallet_origin).map_err(|e| {
            format!("{e}: open the bridge (or the wallet page) in that browser first")
        })?,
    };
    wallet.enable_webmcp().map_err(e)?;
    let mut site = browser.new_page().map_err(e)?;
    site.enable_webmcp().map_err(e)?;
    site.navigate(site_url).map_err(e)?;
    site.wait_tool(tools.requirements, std::time::Duration::from_secs(20))
        .map_err(e)?;
    let answer =
        agent::run_flow(&mut wallet, &mut site, tools, Person::Real, &mut say).map_err(e)?;
    say(&format!("site answered: {answer}"));
    Ok(())
}
