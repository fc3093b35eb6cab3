//! Shared by the JSON targets: a structure-aware mutator.
//!
//! libFuzzer's byte mutations mostly break JSON, and when they keep it they rarely turn one
//! well-formed value into another interesting one: a 13-digit timestamp does not become
//! `i64::MIN` by flipping bits, and keeping the document valid means editing one token at a
//! time. So half of the mutations parse the input as JSON, pick one node at random and replace
//! it with a boundary value, a near neighbour, a value copied from elsewhere in the document, or
//! another shape (or delete or duplicate it), then write the document back. The other half (and
//! every input that is not JSON) go to libFuzzer's own mutator.

pub mod recipe;
pub mod services;

use serde_json::{Map, Number, Value};

/// Integers at the edges of the types the schemas use (u8, u32, i64, u64, f64's exact range)
/// and of their rules (a day, 24 hours, two minutes).
const INTEGERS: &[i128] = &[
    0,
    1,
    -1,
    2,
    255,
    256,
    65_535,
    u32::MAX as i128,
    u32::MAX as i128 + 1,
    120_000,
    86_400_000,
    86_400_001,
    (1 << 53) + 1,
    i64::MAX as i128,
    i64::MIN as i128,
    i64::MAX as i128 - 1,
    i64::MIN as i128 + 1,
    u64::MAX as i128,
];

const FLOATS: &[f64] = &[0.5, -0.0, 1e300, -1e300, 2.0];

const STRINGS: &[&str] = &[
    "",
    " ",
    "\u{0}",
    "é",
    "\u{202e}",
    "null",
    "0",
    "-1",
    "EUR",
    "eur",
    "https://housing.example",
    "http://127.0.0.1:8081",
    "https://housing.example/",
    "http://[::1]:8081",
    "income_below",
    "age_at_least",
    "resides_in",
    "has_none_of",
    "self_asserted",
    "satisfied",
    "not_satisfied",
    "declined",
    "active",
    "retired",
    "r1",
    "p9",
    "g2",
];

/// A small deterministic generator seeded by libFuzzer.
struct Rng(u64);

impl Rng {
    fn new(seed: u32) -> Self {
        Self(u64::from(seed) ^ 0x9e37_79b9_7f4a_7c15)
    }

    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The path of every node: object keys and array indices from the root.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

fn paths(value: &Value, here: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    out.push(here.clone());
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                here.push(Step::Key(key.clone()));
                paths(child, here, out);
                here.pop();
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                here.push(Step::Index(i));
                paths(child, here, out);
                here.pop();
            }
        }
        _ => {}
    }
}

fn node_mut<'a>(mut value: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    for step in path {
        value = match (step, value) {
            (Step::Key(k), Value::Object(map)) => map.get_mut(k)?,
            (Step::Index(i), Value::Array(items)) => items.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(value)
}

fn integer(n: i128) -> Value {
    if let Ok(i) = i64::try_from(n) {
        Value::Number(Number::from(i))
    } else if let Ok(u) = u64::try_from(n) {
        Value::Number(Number::from(u))
    } else {
        Value::Null
    }
}

/// A value found elsewhere in the document, of the same kind as `like` when one exists.
fn borrowed(doc: &Value, all: &[Vec<Step>], like: &Value, rng: &mut Rng) -> Option<Value> {
    let mut doc = doc.clone();
    let same: Vec<Value> = all
        .iter()
        .filter_map(|p| node_mut(&mut doc, p).map(|v| v.clone()))
        .filter(|v| std::mem::discriminant(v) == std::mem::discriminant(like))
        .collect();
    (!same.is_empty()).then(|| rng.pick(&same).clone())
}

fn mutate_node(node: &mut Value, donor: Option<Value>, rng: &mut Rng) {
    match rng.below(8) {
        // Another value of the same kind.
        0..=3 => match node {
            Value::Number(n) => {
                let current = n
                    .as_i64()
                    .map(i128::from)
                    .or(n.as_u64().map(i128::from))
                    .unwrap_or(0);
                *node = match rng.below(6) {
                    0 | 1 => integer(*rng.pick(INTEGERS)),
                    2 => integer(current + (rng.below(5) as i128) - 2),
                    3 => integer(-current),
                    4 => integer(current * 1000),
                    _ => Number::from_f64(*rng.pick(FLOATS)).map_or(Value::Null, Value::Number),
                };
            }
            Value::String(s) => {
                *s = match rng.below(5) {
                    0 | 1 => (*rng.pick(STRINGS)).to_owned(),
                    2 => s.to_uppercase(),
                    3 => s.chars().take(s.chars().count() / 2).collect(),
                    _ => format!("{s}{}", "a".repeat(1 + rng.below(300))),
                };
            }
            Value::Bool(b) => *b = !*b,
            Value::Array(items) if !items.is_empty() => {
                let i = rng.below(items.len());
                if rng.below(2) == 0 {
                    let copy = items[i].clone();
                    items.insert(i, copy);
                } else {
                    items.remove(i);
                }
            }
            Value::Object(map) if !map.is_empty() => {
                let keys: Vec<String> = map.keys().cloned().collect();
                let key = rng.pick(&keys).clone();
                if rng.below(2) == 0 {
                    map.remove(&key);
                } else {
                    map.insert(format!("{key}_"), Value::Null);
                }
            }
            _ => *node = integer(*rng.pick(INTEGERS)),
        },
        // A value copied from elsewhere in the document.
        4 | 5 => {
            if let Some(donor) = donor {
                *node = donor;
            }
        }
        // Another shape.
        _ => {
            *node = match rng.below(6) {
                0 => Value::Null,
                1 => Value::Bool(true),
                2 => Value::Array(vec![node.clone()]),
                3 => Value::Object(Map::new()),
                4 => Value::String(node.to_string()),
                _ => integer(*rng.pick(INTEGERS)),
            };
        }
    }
}

/// The body of a `fuzz_mutator!`: a structural JSON mutation half the time, libFuzzer's own
/// otherwise (and whenever the input is not JSON or the result would not fit).
pub fn mutate_json(data: &mut [u8], size: usize, max_size: usize, seed: u32) -> usize {
    let mut rng = Rng::new(seed);
    if rng.below(2) == 0 {
        return libfuzzer_sys::fuzzer_mutate(data, size, max_size);
    }
    let Ok(mut doc) = serde_json::from_slice::<Value>(&data[..size]) else {
        return libfuzzer_sys::fuzzer_mutate(data, size, max_size);
    };
    let mut all = Vec::new();
    paths(&doc, &mut Vec::new(), &mut all);
    let rounds = 1 + rng.below(3);
    for _ in 0..rounds {
        let path = rng.pick(&all).clone();
        let like = node_mut(&mut doc, &path).map(|v| v.clone());
        let donor = like.and_then(|like| borrowed(&doc, &all, &like, &mut rng));
        if let Some(node) = node_mut(&mut doc, &path) {
            mutate_node(node, donor, &mut rng);
        }
    }
    let Ok(bytes) = (if rng.below(2) == 0 {
        serde_json::to_vec(&doc)
    } else {
        serde_json::to_vec_pretty(&doc)
    }) else {
        return libfuzzer_sys::fuzzer_mutate(data, size, max_size);
    };
    if bytes.len() > max_size {
        return libfuzzer_sys::fuzzer_mutate(data, size, max_size);
    }
    data[..bytes.len()].copy_from_slice(&bytes);
    bytes.len()
}
