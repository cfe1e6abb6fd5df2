//! Each lint shown failing: a violation planted in a copy of a real file of the core (the
//! copy is checked, never written back), found under its rule; the real file, unplanted,
//! is clean; test code is skipped wherever it stands.

use std::path::{Path, PathBuf};

use pgprompt_lints::{check, Finding};

fn real(path: &str) -> (PathBuf, String) {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{path}: {e}"));
    (PathBuf::from(path), text)
}

/// The findings of `path` with `planted` appended.
fn planted(path: &str, planted: &str) -> Vec<Finding> {
    let (p, text) = real(path);
    assert_eq!(check(&p, &text, 80).unwrap(), vec![], "{path} is clean unplanted");
    check(&p, &format!("{text}\n{planted}\n"), 80).unwrap()
}

fn rules(found: &[Finding]) -> Vec<&'static str> {
    found.iter().map(|f| f.rule).collect()
}

#[test]
fn a_long_function_after_a_test_module_is_found() {
    let body = "    let _ = 1;\n".repeat(80);
    let found = planted(
        "core/src/budget.rs",
        &format!("#[cfg(test)]\nmod more_tests {{}}\n\nfn planted() {{\n{body}}}"),
    );
    assert_eq!(rules(&found), ["length"], "{found:?}");
    assert!(found[0].what.contains("fn planted is 82 lines"), "{found:?}");
}

#[test]
fn a_wildcard_on_a_wire_is_found_whatever_the_scrutinee_is_called() {
    let found = planted(
        "core/src/wire/mod.rs",
        "fn planted(x: Wire) -> u8 { match x { Wire::Chat => 1, _ => 0 } }",
    );
    assert_eq!(rules(&found), ["catch-all"], "{found:?}");
}

#[test]
fn a_binding_that_takes_any_wire_is_found() {
    let found = planted(
        "core/src/wire/mod.rs",
        "fn planted(x: Wire) -> Wire { match x { Wire::Chat => Wire::Chat, other => other } }",
    );
    assert_eq!(rules(&found), ["catch-all"], "{found:?}");
    let found = planted(
        "core/src/wire/mod.rs",
        "fn planted(x: Wire) -> u8 { match x { Wire::Chat => 1, w @ _ => w as u8 } }",
    );
    assert_eq!(rules(&found), ["catch-all"], "{found:?}");
}

#[test]
fn a_tuple_place_that_takes_any_wire_is_found() {
    let found = planted(
        "core/src/wire/mod.rs",
        "fn planted(x: Wire, y: Option<u8>) -> u8 { match (x, y) { (Wire::Chat, _) => 1, (w, Some(p)) => p, (_, None) => 0 } }",
    );
    assert_eq!(rules(&found), ["catch-all", "catch-all"], "{found:?}");
}

#[test]
fn a_catch_all_on_a_part_kind_is_found_in_a_shared_file() {
    let found = planted(
        "core/src/items.rs",
        "fn planted(k: &PartKind) -> bool { match k { PartKind::Text(_) => true, _ => false } }",
    );
    assert_eq!(rules(&found), ["catch-all"], "{found:?}");
}

#[test]
fn matches_on_a_part_kind_or_a_wire_is_found_even_inside_another_macro() {
    let found = planted(
        "core/src/wire/responses/mod.rs",
        "fn planted(k: &PartKind) -> bool { matches!(k, PartKind::Text(_) | PartKind::Image { .. }) }",
    );
    assert_eq!(rules(&found), ["catch-all"], "{found:?}");
    let found = planted(
        "core/src/wire/mod.rs",
        "fn planted(x: Wire) { assert!(matches!(x, Wire::Chat if true), \"{x:?}\"); }",
    );
    assert_eq!(rules(&found), ["catch-all"], "{found:?}");
}

#[test]
fn a_wire_named_outside_its_folder_is_found() {
    let found = planted(
        "core/src/budget.rs",
        "fn planted() -> crate::kinds::Wire { crate::kinds::Wire::Converse }",
    );
    assert_eq!(rules(&found), ["placed"], "{found:?}");
    // The enum itself and its constants are not a wire's variant.
    let found = planted(
        "core/src/budget.rs",
        "fn planted() -> usize { crate::kinds::Wire::ALL.len() }",
    );
    assert_eq!(found, vec![]);
}

#[test]
fn test_code_is_skipped_by_item_wherever_it_stands() {
    let long = "    let _ = 1;\n".repeat(90);
    let found = planted(
        "core/src/budget.rs",
        &format!(
            "#[cfg(test)]\nmod planted {{\n    fn f(x: Wire) -> u8 {{ match x {{ Wire::Chat => 1, _ => 0 }} }}\n}}\n\
             #[test]\nfn planted_test() {{\n{long}}}\n\nfn after() -> u8 {{ 1 }}"
        ),
    );
    assert_eq!(found, vec![]);
}

#[test]
fn a_catch_all_behind_or_cases_of_tuples_is_found_and_a_named_place_beside_rest_is_not() {
    let found = planted(
        "core/src/wire/mod.rs",
        "fn planted(x: Wire, y: u8) -> u8 { match (x, y) { (Wire::Chat, _) | (Wire::Gemini, _) => 1, (_, n) => n } }",
    );
    assert_eq!(rules(&found), ["catch-all"], "{found:?}");
    let found = planted(
        "core/src/wire/mod.rs",
        "fn planted(x: Wire, y: u8, z: u8) -> u8 { match (x, y, z) { (Wire::Chat, ..) => 1, (Wire::Anthropic | Wire::Responses | Wire::Gemini | Wire::Converse, ..) => 2 } }",
    );
    assert_eq!(found, vec![], "a `..` after the named place covers the others");
    let found = planted(
        "core/src/wire/mod.rs",
        "fn planted(x: Wire, y: u8) -> u8 { match (y, x) { (0, Wire::Chat) => 1, (..) => 0 } }",
    );
    assert_eq!(rules(&found), ["catch-all"], "{found:?}");
}

#[test]
fn self_variants_in_the_enums_own_impl_and_nested_or_qualified_matches_are_found() {
    let found = planted(
        "core/src/kinds.rs",
        "impl Wire { fn planted(self) -> u8 { match self { Self::Chat => 1, _ => 0 } } }",
    );
    assert_eq!(rules(&found), ["catch-all"], "{found:?}");
    let found = planted(
        "core/src/items.rs",
        "fn planted(k: Option<&PartKind>) -> bool { std::matches!(k, Some(PartKind::Text(_))) }",
    );
    assert_eq!(rules(&found), ["catch-all"], "{found:?}");
}
