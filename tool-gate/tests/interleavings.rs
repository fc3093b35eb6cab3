//! Property: whatever order grants, revokes, ticks and calls come in, a call is answered only
//! under a live, unexpired lease with a use left, and never more often than its uses allow.

use proptest::prelude::*;
use tool_gate::{Lease, ToolGate};

#[derive(Debug, Clone)]
enum Op {
    Grant(u8, i64, Option<u32>),
    Revoke(u8),
    Tick,
    Call(u8),
    Wait(i64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u8..3, 1_000i64..5_000, proptest::option::of(1u32..4))
            .prop_map(|(t, ms, u)| Op::Grant(t, ms, u)),
        (0u8..3).prop_map(Op::Revoke),
        Just(Op::Tick),
        (0u8..3).prop_map(Op::Call),
        (0i64..2_000).prop_map(Op::Wait),
    ]
}

proptest! {
    #[test]
    fn calls_are_answered_only_under_a_live_lease(ops in proptest::collection::vec(op(), 1..60)) {
        let mut gate: ToolGate<u8> = ToolGate::new();
        // The model: per tool, (expires_at, uses_left, revoked).
        let mut model: [Option<(i64, Option<u32>, bool)>; 3] = [None; 3];
        let mut now = 0i64;
        for op in ops {
            match op {
                Op::Grant(t, ms, uses) => {
                    gate.grant(format!("t{t}"), t, Lease::new(now, ms, uses).unwrap());
                    model[t as usize] = Some((now + ms, uses, false));
                }
                Op::Revoke(t) => {
                    gate.revoke(&format!("t{t}"));
                    if let Some(m) = model[t as usize].as_mut() { m.2 = true; }
                }
                Op::Tick => { gate.tick(now); }
                Op::Wait(ms) => now += ms,
                Op::Call(t) => {
                    let answered = gate.begin_use(&format!("t{t}"), now).is_ok();
                    let expected = match model[t as usize].as_mut() {
                        Some((exp, uses, revoked)) if !*revoked && now < *exp && *uses != Some(0) => {
                            if let Some(u) = uses.as_mut() { *u -= 1; }
                            true
                        }
                        _ => false,
                    };
                    prop_assert_eq!(answered, expected);
                }
            }
            // What is listed live is what the model says could still answer (ticks aside).
            for (name, t, lease) in gate.live() {
                let m = model[*t as usize].unwrap();
                prop_assert!(!m.2, "{} listed after revoke", name);
                prop_assert!(m.1 != Some(0), "{} listed with no uses", name);
                prop_assert_eq!(lease.expires_at, m.0);
            }
        }
    }
}
