//! # tacit-bridge
//!
//! The page the agent's browser loads when the person's vault lives elsewhere (issue 29): it
//! registers the wallet's persistent tools on `document.modelContext`, and the claim tools the
//! vault's grants allow, and forwards every call over `tacit-relay` to the vault, sealed in the
//! pairing's session ([`tacit_pairing::Session`]). It holds no profile, key, credential or sealed
//! record and answers nothing itself: unpaired, or with the vault unreachable, every call gets
//! `vault_unreachable` ([`tacit_pairing::bridge`], which decides what the page shows and does).
//!
//! Pairing: the page shows an [`tacit_pairing::Offer`] (`MMMM-CCCC-CCCC`, and the whole offer to
//! paste); the person types it into the vault, both run the SPAKE2 handshake through the relay's
//! mailbox, and both show the same fingerprint. The pairing is kept in this origin's
//! `localStorage` (`tacit-bridge/pairing`): whoever reads it can act as this bridge, which can
//! do no more than the agent already does here.
//!
//! Each connection on the pairing's route runs [`tacit_pairing::link::BridgeLink`] (as the MCP
//! door's bridge does): the bridge sends one byte (`hello`); the vault answers with 16 fresh
//! bytes; the bridge answers with 16 of its own and both derive the session from the two (the
//! last exchange wins, so a reconnect on either side converges); the link counts as up once the
//! vault's first frame opens in it. Frames are longer than 16 bytes.
//!
//! The relay is `?relay=` (an `http(s)://host:port` origin), else `http://127.0.0.1:8795`.

#[cfg(target_arch = "wasm32")]
mod glue;

/// Where the pairing is kept in the bridge origin's `localStorage`.
pub const PAIRING_KEY: &str = "tacit-bridge/pairing";

/// The relay when the page's URL names none.
pub const DEFAULT_RELAY: &str = "http://127.0.0.1:8795";

/// The persistent tools as the bridge registers them: the wallet's definitions, no expiry.
pub fn persistent_specs() -> Vec<tacit_pairing::bridge::ToolSpec> {
    capability_gate::tool::persistent_tools()
        .into_iter()
        .map(|def| tacit_pairing::bridge::ToolSpec {
            name: def.name.as_str().to_owned(),
            definition: def.to_webmcp_json(),
            expires_at: None,
        })
        .collect()
}

/// The offer as a QR code the vault can scan: an SVG element (no XML prolog) of the offer's URI,
/// error correction M, with its quiet zone, at least 232 px wide. `None` if the URI is too long
/// for a QR code (an offer never is).
pub fn offer_qr_svg(uri: &str) -> Option<String> {
    let code =
        qrcode::QrCode::with_error_correction_level(uri.as_bytes(), qrcode::EcLevel::M).ok()?;
    let svg = code
        .render::<qrcode::render::svg::Color>()
        .min_dimensions(232, 232)
        .quiet_zone(true)
        .build();
    Some(match svg.split_once("?>") {
        Some((_, element)) => element.to_owned(),
        None => svg,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bridge_registers_the_wallets_persistent_tools() {
        let names: Vec<String> = persistent_specs().into_iter().map(|s| s.name).collect();
        assert!(names.contains(&"request_claims".to_owned()), "{names:?}");
        assert!(names.contains(&"wallet_status".to_owned()), "{names:?}");
    }

    #[test]
    fn the_offer_s_qr_code_is_one_svg_element() {
        let svg = offer_qr_svg("tacit-pair:v1/4H7Q-7KQ2-M9XD-AB12/http://127.0.0.1:8795").unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        assert!(svg.ends_with("</svg>"));
        assert!(offer_qr_svg(&"x".repeat(5000)).is_none());
    }
}
