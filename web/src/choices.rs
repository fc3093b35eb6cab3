//! What the person chose on each consent and approval card, kept in Rust.
//!
//! When a card is drawn, the elements it is made of are kept here by identity (the JS objects
//! themselves), with the request or proposal they act for and the card's first choices: which
//! claims or items are ticked, the duration, the acknowledgement. Only a trusted `change` (the
//! person's own click, key or choice) on one of those elements changes a choice; a script's
//! `.click()`, `checked = true`, `value = …` or synthetic `change` changes nothing, and the card
//! is drawn back to what is kept. Grant and Release read only what is kept here, and a click acts
//! for the button it landed on, found by identity: no `data-id`, `data-action`, `checked` or
//! `value` is read at the moment of an act.

use std::cell::RefCell;

use capability_gate::{Lifetime, ProposalId, RequestId, words};
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlInputElement, HtmlSelectElement};

use crate::dom;

/// What a card's button does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Does {
    Grant,
    Deny,
    /// Deny every request the card's origin has waiting.
    DenyAll,
    Release,
    Refuse,
}

/// Whom a card acts for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    Request(RequestId),
    Proposal(ProposalId),
}

/// A box on a card: a claim (consent card) or an answer (approval card).
struct Tick {
    element: Element,
    index: usize,
    ticked: bool,
    /// The memory would decline this claim: it stays unticked and cannot be ticked.
    declined: bool,
}

struct Card {
    owner: Owner,
    buttons: Vec<(Element, Does)>,
    ticks: Vec<Tick>,
    /// The duration select and the choice kept for it (consent cards).
    duration: Option<(Element, String)>,
    /// The Allow button, whose words follow the kept duration.
    allow: Option<Element>,
    short: bool,
    /// "I understand this site is not confirmed" and whether the person ticked it.
    ack: Option<(Element, bool)>,
    /// The digest the approval card shows.
    digest: String,
}

thread_local! {
    static CARDS: RefCell<Vec<Card>> = const { RefCell::new(Vec::new()) };
    /// The wallet is locked (the Allow buttons say they unlock).
    static LOCKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The box the person's own (trusted) click or key just activated. A box's `change` is the
    /// person's only right after that: the browser marks the `change` that follows a script's
    /// `.click()` trusted too, so `isTrusted` on the `change` alone proves nothing.
    static ARMED: RefCell<Option<Element>> = const { RefCell::new(None) };
}

/// A click anywhere in the page (listened to in the capture phase, before the box toggles):
/// remembers a kept box the person's own click activated, and keeps a script's click from
/// toggling one at all.
pub fn on_click(event: web_sys::Event) {
    let Some(target) = event.target().and_then(|t| t.dyn_into::<Element>().ok()) else {
        return;
    };
    let kept = CARDS.with(|cards| {
        cards.borrow().iter().any(|c| {
            c.ticks.iter().any(|t| t.element == target)
                || c.ack.as_ref().is_some_and(|(a, _)| *a == target)
        })
    });
    if !kept {
        return;
    }
    if event.is_trusted() {
        ARMED.with(|a| *a.borrow_mut() = Some(target));
    } else {
        ARMED.with(|a| *a.borrow_mut() = None);
        event.prevent_default();
    }
}

/// Whether `element`'s change follows the person's own click on it (and uses that click up).
fn armed(element: &Element) -> bool {
    ARMED.with(|a| {
        let mut a = a.borrow_mut();
        let was = a.as_ref() == Some(element);
        if was {
            *a = None;
        }
        was
    })
}

/// The Allow button's words for the duration choice `choice` ("Allow for 10 minutes"; while
/// the wallet is locked, "Unlock and allow for 10 minutes").
pub fn allow_words(choice: &str, short: bool) -> String {
    let locked = LOCKED.get();
    Lifetime::from_choice(choice, short)
        .map(|l| {
            if locked {
                words::unlock_and_allow(&l)
            } else {
                words::allow(&l)
            }
        })
        .unwrap_or_else(|| if locked { "Unlock and allow" } else { "Allow" }.to_owned())
}

/// Whether the wallet is locked now: every kept card's Allow button says so at once.
pub fn set_locked(locked: bool) {
    if LOCKED.replace(locked) != locked {
        CARDS.with(|cards| cards.borrow().iter().for_each(draw));
    }
}

fn keep(card: Card) {
    CARDS.with(|cards| {
        let mut cards = cards.borrow_mut();
        cards.retain(|c| c.owner != card.owner);
        cards.push(card);
    });
}

/// Keeps a consent card just drawn: its Allow and Don't allow buttons, its claim boxes (none
/// ticked: only the person ticks one), its duration select (at `duration`) for request `id`.
#[allow(clippy::too_many_arguments)]
pub fn keep_request(
    id: &RequestId,
    allow: &Element,
    deny: &Element,
    deny_all: &Element,
    boxes: Vec<(Element, usize)>,
    select: &Element,
    duration: &str,
    short: bool,
) {
    keep(Card {
        owner: Owner::Request(id.clone()),
        buttons: vec![
            (allow.clone(), Does::Grant),
            (deny.clone(), Does::Deny),
            (deny_all.clone(), Does::DenyAll),
        ],
        ticks: boxes
            .into_iter()
            .map(|(element, index)| Tick {
                element,
                index,
                ticked: false,
                declined: false,
            })
            .collect(),
        duration: Some((select.clone(), duration.to_owned())),
        allow: Some(allow.clone()),
        short,
        ack: None,
        digest: String::new(),
    });
}

/// Keeps a waiting approval card just drawn: its Send and Don't send buttons, its answers'
/// boxes (none ticked: the person ticks the answers to send), the acknowledgement box if it
/// asks for one (unticked), and the digest it shows, for proposal `id`.
pub fn keep_proposal(
    id: &ProposalId,
    release: &Element,
    refuse: &Element,
    items: Vec<(Element, usize)>,
    ack: Option<&Element>,
    digest: &str,
) {
    keep(Card {
        owner: Owner::Proposal(id.clone()),
        buttons: vec![
            (release.clone(), Does::Release),
            (refuse.clone(), Does::Refuse),
        ],
        ticks: items
            .into_iter()
            .map(|(element, index)| Tick {
                element,
                index,
                ticked: false,
                declined: false,
            })
            .collect(),
        duration: None,
        allow: None,
        short: false,
        ack: ack.map(|a| (a.clone(), false)),
        digest: digest.to_owned(),
    });
}

/// Forgets the cards that are no longer drawn: requests other than `requests`, proposals other
/// than `proposals` (`None`: leave that kind alone).
pub fn forget_others(requests: Option<&[RequestId]>, proposals: Option<&[ProposalId]>) {
    CARDS.with(|cards| {
        cards.borrow_mut().retain(|c| match &c.owner {
            Owner::Request(id) => requests.is_none_or(|ids| ids.contains(id)),
            Owner::Proposal(id) => proposals.is_none_or(|ids| ids.contains(id)),
        });
    });
}

fn with_card<T>(owner: &Owner, f: impl FnOnce(&mut Card) -> T) -> Option<T> {
    CARDS.with(|cards| {
        cards
            .borrow_mut()
            .iter_mut()
            .find(|c| &c.owner == owner)
            .map(f)
    })
}

/// The memory's word on claim `index` of request `id`: `declined` (it stays unticked and
/// cannot be ticked), or it would answer (the box is the person's: it is never ticked for them).
pub fn memory_says(id: &RequestId, index: usize, declined: bool) {
    with_card(&Owner::Request(id.clone()), |card| {
        if let Some(tick) = card.ticks.iter_mut().find(|t| t.index == index) {
            if declined {
                tick.declined = true;
                tick.ticked = false;
            } else {
                // No longer declined (the fact was edited): the person ticks it themselves.
                tick.declined = false;
            }
        }
        draw(card);
    });
}

/// Draws a card's boxes, select and Allow words back to what is kept.
fn draw(card: &Card) {
    for tick in &card.ticks {
        set_checked(&tick.element, tick.ticked);
        let disabled = tick.element.has_attribute("disabled");
        if tick.declined && !disabled {
            dom::attr(&tick.element, "disabled", "");
        } else if !tick.declined && disabled {
            let _ = tick.element.remove_attribute("disabled");
        }
    }
    if let Some((select, value)) = &card.duration
        && let Some(s) = select.dyn_ref::<HtmlSelectElement>()
        && s.value() != *value
    {
        s.set_value(value);
    }
    if let (Some(allow), Some((_, value))) = (&card.allow, &card.duration) {
        dom::set_text_of(allow, &allow_words(value, card.short));
    }
    if let Some((ack, ticked)) = &card.ack {
        set_checked(ack, *ticked);
    }
}

fn set_checked(element: &Element, ticked: bool) {
    if let Some(input) = element.dyn_ref::<HtmlInputElement>()
        && input.checked() != ticked
    {
        input.set_checked(ticked);
    }
}

fn checked(element: &Element) -> bool {
    element
        .dyn_ref::<HtmlInputElement>()
        .is_some_and(HtmlInputElement::checked)
}

/// Whether what the card shows is what is kept (a script may have ticked a box without an
/// event, or kept the person's change from reaching the page).
fn agrees(card: &Card) -> bool {
    let ticks = card.ticks.iter().all(|t| checked(&t.element) == t.ticked);
    let duration = card.duration.as_ref().is_none_or(|(select, value)| {
        select
            .dyn_ref::<HtmlSelectElement>()
            .is_some_and(|s| s.value() == *value)
    });
    let ack = card
        .ack
        .as_ref()
        .is_none_or(|(ack, ticked)| checked(ack) == *ticked);
    ticks && duration && ack
}

/// A `change` anywhere in the page (listened to in the capture phase): on a kept select, a
/// trusted one is the person's choice; on a kept box, a trusted one right after the person's
/// own click on it ([`on_click`]). It is kept; any other is undone by drawing the card back to
/// what is kept.
pub fn on_change(event: web_sys::Event) {
    let Some(target) = event.target().and_then(|t| t.dyn_into::<Element>().ok()) else {
        return;
    };
    let trusted = event.is_trusted();
    CARDS.with(|cards| {
        let mut cards = cards.borrow_mut();
        for card in cards.iter_mut() {
            let mut mine = false;
            for tick in card.ticks.iter_mut().filter(|t| t.element == target) {
                mine = true;
                if trusted && armed(&tick.element) && !tick.declined {
                    tick.ticked = checked(&tick.element);
                }
            }
            if let Some((select, value)) = card.duration.as_mut()
                && *select == target
            {
                mine = true;
                let chosen = select
                    .dyn_ref::<HtmlSelectElement>()
                    .map(HtmlSelectElement::value)
                    .unwrap_or_default();
                // Only a duration the card offers is kept.
                if trusted && Lifetime::from_choice(&chosen, card.short).is_some() {
                    *value = chosen;
                }
            }
            if let Some((ack, ticked)) = card.ack.as_mut()
                && *ack == target
            {
                mine = true;
                if trusted && armed(ack) {
                    *ticked = checked(ack);
                }
            }
            if mine {
                draw(card);
                return;
            }
        }
    });
}

/// The kept card button a click on `target` landed on (the element itself or one of its
/// ancestors, compared by identity), with what it does and whom it acts for.
pub fn button_at(target: &Element) -> Option<(Does, Owner)> {
    CARDS.with(|cards| {
        let cards = cards.borrow();
        let mut at = Some(target.clone());
        while let Some(element) = at {
            for card in cards.iter() {
                if let Some((_, does)) = card.buttons.iter().find(|(b, _)| *b == element) {
                    return Some((*does, card.owner.clone()));
                }
            }
            at = element.parent_element();
        }
        None
    })
}

/// Why an act cannot go ahead with what the card keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotYet {
    /// The card is not drawn (any more).
    NoCard,
    /// The card showed something other than what is kept; it is drawn back.
    Changed,
    /// Nothing is ticked.
    NothingTicked,
}

/// What the person chose on request `id`'s card: the ticked claims the memory would answer, and
/// the duration choice.
pub fn grant_choice(id: &RequestId) -> Result<(Vec<usize>, String), NotYet> {
    with_card(&Owner::Request(id.clone()), |card| {
        if !agrees(card) {
            draw(card);
            return Err(NotYet::Changed);
        }
        let chosen: Vec<usize> = card
            .ticks
            .iter()
            .filter(|t| t.ticked && !t.declined)
            .map(|t| t.index)
            .collect();
        if chosen.is_empty() {
            return Err(NotYet::NothingTicked);
        }
        let duration = card
            .duration
            .as_ref()
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        Ok((chosen, duration))
    })
    .unwrap_or(Err(NotYet::NoCard))
}

/// What the person chose on proposal `id`'s card: the kept answers, whether they acknowledged
/// an unconfirmed site (`false` also where the card asks for nothing), and the digest the card
/// shows.
pub fn release_choice(id: &ProposalId) -> Result<(Vec<usize>, bool, String), NotYet> {
    with_card(&Owner::Proposal(id.clone()), |card| {
        // The answers' boxes must show what is kept. The acknowledgement is what the person
        // ticked, whatever the box shows now: a box ticked by a script is drawn back unticked,
        // and the gate then refuses to send to the unconfirmed site.
        let agreed = card.ticks.iter().all(|t| checked(&t.element) == t.ticked);
        draw(card);
        if !agreed {
            return Err(NotYet::Changed);
        }
        let kept: Vec<usize> = card
            .ticks
            .iter()
            .filter(|t| t.ticked)
            .map(|t| t.index)
            .collect();
        if kept.is_empty() {
            return Err(NotYet::NothingTicked);
        }
        let acknowledged = card.ack.as_ref().is_some_and(|(_, ticked)| *ticked);
        Ok((kept, acknowledged, card.digest.clone()))
    })
    .unwrap_or(Err(NotYet::NoCard))
}
