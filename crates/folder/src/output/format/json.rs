//! What the steps do to a file's parsed JSON: add a key where it is absent,
//! reach a nested object or every object of a list, and find a key by its
//! path. A step edits JSON, never the structs, so it keeps meaning what it
//! meant when those structs change.

use serde_json::{Map, Value};

pub(super) type Object = Map<String, Value>;

/// Adds `key` as `value` where `object` lacks it: a key an older file
/// does hold is kept as it is.
pub(super) fn absent(object: &mut Object, key: &str, value: Value) {
    object.entry(key).or_insert(value);
}

/// The object at `key` of `object`, if it is one.
pub(super) fn object<'a>(object: &'a mut Object, key: &str) -> Option<&'a mut Object> {
    object.get_mut(key).and_then(Value::as_object_mut)
}

/// Every object in the list at `key` of `object`.
pub(super) fn each<'a>(object: &'a mut Object, key: &str) -> impl Iterator<Item = &'a mut Object> {
    object
        .get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

/// Whether `file` holds the key at `path`: names joined by `.`, a name
/// ending in `[]` for every element of a list (`forks[].placement.backend_ticks`
/// is held when any fork's placement holds `backend_ticks`).
pub(super) fn holds(file: &Value, path: &str) -> bool {
    let (name, rest) = match path.split_once('.') {
        Some((name, rest)) => (name, Some(rest)),
        None => (path, None),
    };
    let (name, list) = match name.strip_suffix("[]") {
        Some(name) => (name, true),
        None => (name, false),
    };
    match (file.get(name), rest) {
        (None, _) => false,
        (Some(_), None) => true,
        (Some(value), Some(rest)) if list => value
            .as_array()
            .is_some_and(|items| items.iter().any(|item| holds(item, rest))),
        (Some(value), Some(rest)) => holds(value, rest),
    }
}
