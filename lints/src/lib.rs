//! The code's rules that read the syntax tree, not the text (scripts/lint.sh runs them over
//! both crates; `tests/planted.rs` plants each violation in a copy of a real file):
//!
//! - **length**: no function longer than the limit (80 lines), in any file, whole;
//! - **catch-all**: no `match` that decides a wire or a part's kind (an arm, or one of its
//!   `|` cases, names `Wire::…`, `PartKind::…`, or `Self::…` in their `impl`, at its top or
//!   in a place of a tuple) has an arm that takes any of them there — `_`, a binding
//!   (`other =>`, `w @ _`), such a place in a tuple (`(w, Some(p)) =>`), or a `..` over
//!   it — whatever its scrutinee is called; and no `matches!` names one anywhere in its
//!   pattern: a new wire or part kind is then a compile error where a match decides it,
//!   never a silent default. Not checked: `if let` and `let … else` (a test of one
//!   variant, read as such), a variant deeper in an arm's pattern (inside `Some(…)`, a
//!   struct's field, a slice), and variants brought in by a glob `use`;
//! - **placed**: outside `core/src/wire/`, `core/src/kinds.rs` and the test build's
//!   `core/src/testing.rs`, no code names a wire's variant (`Wire::Converse`): the rest of
//!   the core asks the wire's form.
//!
//! Test code is skipped by item (`#[cfg(test)]` modules and `#[test]` functions), wherever it
//! stands in the file.

use std::fmt;
use std::path::Path;

use syn::spanned::Spanned;
use syn::visit::{self, Visit};

/// The enums whose every value must be decided where it is matched.
const DECIDED: [&str; 2] = ["Wire", "PartKind"];

/// One violation: where, which rule, what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The file, as given.
    pub path: String,
    /// The 1-based line.
    pub line: usize,
    /// The rule broken: `length`, `catch-all` or `placed`.
    pub rule: &'static str,
    /// What was found.
    pub what: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: [{}] {}", self.path, self.line, self.rule, self.what)
    }
}

/// Checks one file's source; `path` says where it is (which decides `placed`).
pub fn check(path: &Path, source: &str, limit: usize) -> Result<Vec<Finding>, String> {
    let file = syn::parse_file(source).map_err(|e| format!("{}: does not parse: {e}", path.display()))?;
    let shown = path.display().to_string();
    let unix = shown.replace('\\', "/");
    let mut v = Checker {
        path: shown,
        limit,
        // The wire folder, the enum's file, and the test build's scenario builder.
        placed: unix.contains("core/src/wire/")
            || unix.ends_with("core/src/kinds.rs")
            || unix.ends_with("core/src/testing.rs"),
        this: None,
        found: Vec::new(),
    };
    v.visit_file(&file);
    Ok(v.found)
}

struct Checker {
    path: String,
    limit: usize,
    placed: bool,
    /// The decided enum whose `impl` the visitor is in (`Self::Chat` names a wire there).
    this: Option<&'static str>,
    found: Vec<Finding>,
}

impl Checker {
    fn report(&mut self, span: proc_macro2::Span, rule: &'static str, what: String) {
        self.found.push(Finding {
            path: self.path.clone(),
            line: span.start().line,
            rule,
            what,
        });
    }

    fn length(&mut self, name: &syn::Ident, from: proc_macro2::Span, to: proc_macro2::Span) {
        let lines = to.end().line.saturating_sub(from.start().line) + 1;
        if lines > self.limit {
            let what = format!("fn {name} is {lines} lines (limit {})", self.limit);
            self.report(from, "length", what);
        }
    }
}

/// Whether the attributes make the item test code: `#[test]`, or `#[cfg(test)]`.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("test")
            || (a.path().is_ident("cfg") && a.parse_args::<syn::Meta>().is_ok_and(|m| m.path().is_ident("test")))
    })
}

/// The decided enum a path names a value of (`Wire::Chat`, `crate::items::PartKind::Text`,
/// `Self::Chat` inside `impl Wire`): a segment named after it followed by a variant
/// (CamelCase, not a constant like `Wire::ALL`).
fn decided(path: &syn::Path, this: Option<&'static str>) -> Option<&'static str> {
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    segs.windows(2).find_map(|w| {
        let variant = w[1].chars().next().is_some_and(char::is_uppercase) && w[1].chars().any(char::is_lowercase);
        if !variant {
            return None;
        }
        match w[0].as_str() {
            "Self" => this,
            name => DECIDED.iter().find(|&&d| d == name).copied(),
        }
    })
}

/// A pattern's alternatives: its `|` cases, under references and parentheses.
fn alternatives(p: &syn::Pat) -> Vec<&syn::Pat> {
    match p {
        syn::Pat::Or(x) => x.cases.iter().flat_map(alternatives).collect(),
        syn::Pat::Reference(x) => alternatives(&x.pat),
        syn::Pat::Paren(x) => alternatives(&x.pat),
        _ => vec![p],
    }
}

/// Whether a pattern takes any value: `_`, a binding, `x @ _`, `..`, `&_`.
fn takes_any(p: &syn::Pat) -> bool {
    match p {
        syn::Pat::Wild(_) | syn::Pat::Rest(_) => true,
        syn::Pat::Ident(x) => x.subpat.as_ref().is_none_or(|(_, p)| takes_any(p)),
        syn::Pat::Reference(x) => takes_any(&x.pat),
        syn::Pat::Paren(x) => takes_any(&x.pat),
        syn::Pat::Or(x) => x.cases.iter().any(takes_any),
        _ => false,
    }
}

/// The element of a tuple pattern at place `i` of a tuple `width` wide (`None`: a `..`
/// covers it, so it takes any value).
fn place<'p>(elems: &[&'p syn::Pat], i: usize, width: usize) -> Option<&'p syn::Pat> {
    match elems.iter().position(|p| matches!(p, syn::Pat::Rest(_))) {
        None => elems.get(i).copied(),
        Some(r) if i < r => Some(elems[i]),
        Some(r) => {
            let after = elems.len() - 1 - r;
            (i + after >= width).then(|| elems[elems.len() - (width - i)])
        }
    }
}

impl Checker {
    /// The decided enum a pattern names at its top (under references, parentheses, `|`
    /// and `x @`).
    fn names(&self, p: &syn::Pat) -> Option<&'static str> {
        alternatives(p).into_iter().find_map(|p| match p {
            syn::Pat::Path(x) => decided(&x.path, self.this),
            syn::Pat::TupleStruct(x) => decided(&x.path, self.this),
            syn::Pat::Struct(x) => decided(&x.path, self.this),
            syn::Pat::Ident(x) => x.subpat.as_ref().and_then(|(_, p)| self.names(p)),
            _ => None,
        })
    }

    /// The decided enum a pattern names anywhere in it (inside an `Option`, a struct's
    /// field, a slice, a tuple).
    fn mentions(&self, p: &syn::Pat) -> Option<&'static str> {
        struct Paths<'c> {
            checker: &'c Checker,
            found: Option<&'static str>,
        }
        impl<'ast> Visit<'ast> for Paths<'_> {
            fn visit_path(&mut self, p: &'ast syn::Path) {
                self.found = self.found.or(decided(p, self.checker.this));
            }
        }
        let mut v = Paths {
            checker: self,
            found: None,
        };
        v.visit_pat(p);
        v.found
    }

    fn catch_all(&mut self, m: &syn::ExprMatch) {
        let arms: Vec<&syn::Pat> = m.arms.iter().map(|a| &a.pat).collect();
        // A match on a decided value itself.
        if let Some(e) = arms.iter().find_map(|p| self.names(p)) {
            for a in arms.iter().filter(|p| takes_any(p)) {
                self.report(a.span(), "catch-all", format!("an arm takes any {e} (name each)"));
            }
            return;
        }
        // A match on a tuple: each place some arm decides, in each `|` case of each arm.
        let split: Vec<Vec<Option<Vec<&syn::Pat>>>> = arms
            .iter()
            .map(|p| {
                alternatives(p)
                    .into_iter()
                    .map(|a| match a {
                        syn::Pat::Tuple(t) => Some(t.elems.iter().collect()),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        let width = split
            .iter()
            .flatten()
            .flatten()
            .map(|t| t.iter().filter(|p| !matches!(p, syn::Pat::Rest(_))).count())
            .max()
            .unwrap_or(0);
        for i in 0..width {
            let Some(e) = split
                .iter()
                .flatten()
                .flatten()
                .find_map(|t| place(t, i, width).and_then(|p| self.names(p)))
            else {
                continue;
            };
            for (arm, cases) in arms.iter().zip(&split) {
                let any = cases.iter().any(|t| match t {
                    Some(t) => place(t, i, width).is_none_or(takes_any),
                    None => takes_any(arm),
                });
                if any {
                    self.report(
                        arm.span(),
                        "catch-all",
                        format!("an arm takes any {e} in place {i} (name each)"),
                    );
                }
            }
        }
    }

    fn matches_macro(&mut self, mac: &syn::Macro) {
        if mac.path.segments.last().is_none_or(|s| s.ident != "matches") {
            return;
        }
        let parsed = mac.parse_body_with(|input: syn::parse::ParseStream<'_>| {
            let _: syn::Expr = input.parse()?;
            let _: syn::Token![,] = input.parse()?;
            let pat = syn::Pat::parse_multi_with_leading_vert(input)?;
            let _: proc_macro2::TokenStream = input.parse()?;
            Ok(pat)
        });
        if let Some(e) = parsed.ok().as_ref().and_then(|p| self.mentions(p)) {
            self.report(
                mac.span(),
                "catch-all",
                format!("matches! tests a {e} and takes every other (an exhaustive match names each)"),
            );
        }
    }
}

impl<'ast> Visit<'ast> for Checker {
    fn visit_item_mod(&mut self, i: &'ast syn::ItemMod) {
        if !is_test(&i.attrs) {
            visit::visit_item_mod(self, i);
        }
    }

    fn visit_item_fn(&mut self, i: &'ast syn::ItemFn) {
        if is_test(&i.attrs) {
            return;
        }
        self.length(&i.sig.ident, i.sig.fn_token.span, i.block.span());
        visit::visit_item_fn(self, i);
    }

    fn visit_impl_item_fn(&mut self, i: &'ast syn::ImplItemFn) {
        if is_test(&i.attrs) {
            return;
        }
        self.length(&i.sig.ident, i.sig.fn_token.span, i.block.span());
        visit::visit_impl_item_fn(self, i);
    }

    fn visit_trait_item_fn(&mut self, i: &'ast syn::TraitItemFn) {
        if let Some(b) = &i.default {
            self.length(&i.sig.ident, i.sig.fn_token.span, b.span());
        }
        visit::visit_trait_item_fn(self, i);
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if is_test(&i.attrs) {
            return;
        }
        let outer = self.this;
        if let syn::Type::Path(t) = &*i.self_ty {
            let name = t.path.segments.last().map(|s| s.ident.to_string());
            self.this = DECIDED.iter().find(|&&d| Some(d) == name.as_deref()).copied();
        }
        visit::visit_item_impl(self, i);
        self.this = outer;
    }

    fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
        self.catch_all(m);
        visit::visit_expr_match(self, m);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.matches_macro(mac);
        // A macro's arguments are tokens to syn: those that read as expressions (assert!,
        // format!, vec!, ...) are checked like any other code.
        let args = mac.parse_body_with(syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated);
        for e in args.iter().flatten() {
            self.visit_expr(e);
        }
        visit::visit_macro(self, mac);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if !self.placed && decided(p, None) == Some("Wire") {
            let shown: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
            self.report(
                p.span(),
                "placed",
                format!(
                    "names {} outside core/src/wire/ (ask the wire's form)",
                    shown.join("::")
                ),
            );
        }
        visit::visit_path(self, p);
    }
}
