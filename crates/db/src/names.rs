//! What the user's SQL names, read with the same tokenizer and parser as
//! `statements`: the tables it mentions (so the guard can tell this run's
//! changes from another session's), the targets of its INSERTs (so a
//! sequence default is refused before anything runs), and the rewrite that
//! points a schema-qualified reference at a private copy.
//!
//! Names are folded as PostgreSQL folds them: an unquoted identifier to
//! lower case, a quoted one as written.

use super::statements::{token_range, SqlDialect};
use sqlparser::ast::{Expr, ObjectName, SetExpr, Statement, Visit, Visitor};
use sqlparser::dialect::{Dialect, PostgreSqlDialect, SQLiteDialect};
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer, Word};
use std::fmt;
use std::ops::ControlFlow;

/// A relation's name as the SQL gives it: with or without its schema.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Name {
    pub schema: Option<String>,
    pub name: String,
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.schema {
            Some(s) => write!(f, "{}.{}", quote(s), quote(&self.name)),
            None => f.write_str(&quote(&self.name)),
        }
    }
}

/// An identifier as PostgreSQL's `quote_ident` writes it: bare when it
/// needs no quotes.
pub fn quote(ident: &str) -> String {
    let plain = ident
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && ident
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        ident.to_owned()
    } else {
        format!("\"{}\"", ident.replace('"', "\"\""))
    }
}

fn fold(w: &Word) -> String {
    match w.quote_style {
        Some(_) => w.value.clone(),
        None => w.value.to_lowercase(),
    }
}

fn dialect(d: SqlDialect) -> Box<dyn Dialect> {
    match d {
        SqlDialect::Sqlite => Box::new(SQLiteDialect {}),
        SqlDialect::Postgres => Box::new(PostgreSqlDialect {}),
    }
}

fn tokens(sql: &str, d: SqlDialect) -> Vec<TokenWithSpan> {
    let d = dialect(d);
    Tokenizer::new(d.as_ref(), sql)
        .tokenize_with_location()
        .unwrap_or_default()
        .into_iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect()
}

/// A table name as `[database] private_copies` gives it: `table` or
/// `schema.table`, each part an identifier (quoted or not); `None` for
/// anything else.
pub fn parse_name(text: &str) -> Option<Name> {
    let t: Vec<Token> = tokens(text, SqlDialect::Postgres)
        .into_iter()
        .map(|t| t.token)
        .filter(|t| *t != Token::EOF)
        .collect();
    let word = |t: &Token| match t {
        Token::Word(w) if !w.value.is_empty() && !w.value.contains('\0') => Some(fold(w)),
        _ => None,
    };
    match t.as_slice() {
        [n] => Some(Name {
            schema: None,
            name: word(n)?,
        }),
        [s, Token::Period, n] => Some(Name {
            schema: Some(word(s)?),
            name: word(n)?,
        }),
        _ => None,
    }
}

/// Every name the text mentions, qualified (`a.b`) or not, also inside
/// string literals and dollar-quoted bodies (a `DO` block, a function
/// call's argument such as `nextval('s')`): more names than the SQL
/// touches, never fewer, so nothing it does is blamed on another session.
pub fn mentioned(sql: &str, d: SqlDialect) -> Vec<Name> {
    let mut out = Vec::new();
    collect(sql, d, 0, &mut out);
    out.sort();
    out.dedup();
    out
}

fn collect(sql: &str, d: SqlDialect, depth: u32, out: &mut Vec<Name>) {
    let t = tokens(sql, d);
    for (i, tok) in t.iter().enumerate() {
        match &tok.token {
            Token::Word(_) => {
                let Some(parts) = chain(&t, i) else { continue };
                let names: Vec<String> = parts.iter().map(|&k| word_at(&t, k)).collect();
                match names.as_slice() {
                    [n] => out.push(Name {
                        schema: None,
                        name: n.clone(),
                    }),
                    // `schema.table`, `schema.table.column`, or
                    // `catalog.schema.table[.column]`: both readings.
                    [a, b, rest @ ..] => {
                        out.push(Name {
                            schema: Some(a.clone()),
                            name: b.clone(),
                        });
                        if let Some(c) = rest.first() {
                            out.push(Name {
                                schema: Some(b.clone()),
                                name: c.clone(),
                            });
                        }
                    }
                    [] => {}
                }
            }
            Token::SingleQuotedString(s) | Token::EscapedStringLiteral(s) if depth < 4 => {
                collect(s, d, depth + 1, out)
            }
            Token::DollarQuotedString(s) if depth < 4 => collect(&s.value, d, depth + 1, out),
            _ => {}
        }
    }
}

/// The token indices of the dotted name (`a.b.c`) that starts at word `i`;
/// `None` when `i` is not its first part.
fn chain(t: &[TokenWithSpan], i: usize) -> Option<Vec<usize>> {
    if !matches!(t[i].token, Token::Word(_)) || (i > 0 && t[i - 1].token == Token::Period) {
        return None;
    }
    let mut parts = vec![i];
    let mut k = i;
    while t.get(k + 1).map(|x| &x.token) == Some(&Token::Period)
        && matches!(t.get(k + 2).map(|x| &x.token), Some(Token::Word(_)))
    {
        k += 2;
        parts.push(k);
    }
    Some(parts)
}

fn word_at(t: &[TokenWithSpan], k: usize) -> String {
    match &t[k].token {
        Token::Word(w) => fold(w),
        _ => String::new(),
    }
}

/// One INSERT (or upsert) of the SQL: its target and which columns it
/// gives values for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Insert {
    pub table: Name,
    supplied: Supplied,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Supplied {
    /// A column list: these columns get values, the others their default.
    Columns(Vec<String>),
    /// No column list, `VALUES` rows: the first `width` columns get
    /// values (the narrowest row), except where a row says `DEFAULT`.
    Values { width: usize, defaults: Vec<usize> },
    /// No column list and a query: how many columns it gives is unknown.
    Unknown,
}

impl Insert {
    /// Whether the INSERT may take the default of `column`, the
    /// `position`th (from 0) of the table's columns.
    pub fn takes_default(&self, column: &str, position: usize) -> bool {
        match &self.supplied {
            Supplied::Columns(c) => !c.iter().any(|c| c == column),
            Supplied::Values { width, defaults } => {
                position >= *width || defaults.contains(&position)
            }
            Supplied::Unknown => true,
        }
    }
}

/// The INSERTs of `sql` (also inside a `WITH`); statements the parser
/// cannot read are passed over (their writes are still rolled back, and a
/// sequence they move is still caught by the guard).
pub fn inserts(sql: &str, d: SqlDialect) -> Vec<Insert> {
    let Ok(ranges) = super::statements::split(sql, d) else {
        return Vec::new();
    };
    let dia = dialect(d);
    let mut found = Inserts(Vec::new());
    for r in ranges {
        if let Ok(parsed) = Parser::parse_sql(dia.as_ref(), &sql[r]) {
            for s in &parsed {
                let _ = s.visit(&mut found);
            }
        }
    }
    found.0
}

struct Inserts(Vec<Insert>);

fn object_name(n: &ObjectName) -> Option<Name> {
    let parts: Vec<String> =
        n.0.iter()
            .map(|p| {
                p.as_ident().map(|i| match i.quote_style {
                    Some(_) => i.value.clone(),
                    None => i.value.to_lowercase(),
                })
            })
            .collect::<Option<_>>()?;
    match parts.as_slice() {
        [n] => Some(Name {
            schema: None,
            name: n.clone(),
        }),
        [.., s, n] => Some(Name {
            schema: Some(s.clone()),
            name: n.clone(),
        }),
        [] => None,
    }
}

impl Visitor for Inserts {
    type Break = ();

    fn pre_visit_statement(&mut self, s: &Statement) -> ControlFlow<()> {
        let Statement::Insert(ins) = s else {
            return ControlFlow::Continue(());
        };
        let sqlparser::ast::TableObject::TableName(table) = &ins.table else {
            return ControlFlow::Continue(());
        };
        let Some(table) = object_name(table) else {
            return ControlFlow::Continue(());
        };
        let supplied = if !ins.columns.is_empty() {
            Supplied::Columns(
                ins.columns
                    .iter()
                    .filter_map(|c| object_name(c).map(|n| n.name))
                    .collect(),
            )
        } else {
            match ins.source.as_deref().map(|q| q.body.as_ref()) {
                Some(SetExpr::Values(v)) => Supplied::Values {
                    width: v.rows.iter().map(|r| r.len()).min().unwrap_or(0),
                    defaults: v
                        .rows
                        .iter()
                        .flat_map(|r| r.iter().enumerate())
                        .filter(|(_, e)| is_default(e))
                        .map(|(i, _)| i)
                        .collect(),
                },
                _ => Supplied::Unknown,
            }
        };
        self.0.push(Insert { table, supplied });
        ControlFlow::Continue(())
    }
}

fn is_default(e: &Expr) -> bool {
    e.to_string().eq_ignore_ascii_case("DEFAULT")
}

/// `sql` with every schema-qualified reference to one of `tables` (each
/// with its schema) pointed at `schema` instead: the private copies an arm
/// reads and writes. A catalog-qualified one (`db.public.orders`) loses
/// its catalog (PostgreSQL only takes the current database there, so it
/// means the same table). Only references in the SQL itself: a name inside
/// a string (a `DO` body, a function's text) is left as written, and the
/// guard on the table's statistics catches a write that reaches it so.
pub fn rewrite(sql: &str, d: SqlDialect, tables: &[Name], schema: &str) -> String {
    let t = tokens(sql, d);
    let mut out = String::with_capacity(sql.len());
    let mut at = 0;
    for i in 0..t.len() {
        let Some(parts) = chain(&t, i) else { continue };
        let copy = |k: usize| {
            let (Some(&s), Some(&n)) = (parts.get(k), parts.get(k + 1)) else {
                return false;
            };
            tables.contains(&Name {
                schema: Some(word_at(&t, s)),
                name: word_at(&t, n),
            })
        };
        // `schema.table[.column]`, else `catalog.schema.table[.column]`.
        let Some(k) = [0, 1].into_iter().find(|&k| copy(k)) else {
            continue;
        };
        let (start, _) = token_range(sql, &t[parts[0]]);
        let (_, end) = token_range(sql, &t[parts[k]]);
        out.push_str(&sql[at..start]);
        out.push_str(schema);
        at = end;
    }
    out.push_str(&sql[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PG: SqlDialect = SqlDialect::Postgres;

    fn n(schema: Option<&str>, name: &str) -> Name {
        Name {
            schema: schema.map(str::to_owned),
            name: name.to_owned(),
        }
    }

    #[test]
    fn names_are_read_and_folded_as_postgresql_does() {
        assert_eq!(
            parse_name("public.Orders"),
            Some(n(Some("public"), "orders"))
        );
        assert_eq!(
            parse_name("\"Shop\".\"Big Table\""),
            Some(n(Some("Shop"), "Big Table"))
        );
        assert_eq!(parse_name("orders"), Some(n(None, "orders")));
        for bad in ["", "a.b.c", "a;b", "'x'", "a."] {
            assert_eq!(parse_name(bad), None, "{bad}");
        }
        assert_eq!(n(Some("Shop"), "t").to_string(), "\"Shop\".t");
    }

    #[test]
    fn every_mention_counts_also_inside_strings_and_bodies() {
        let m = mentioned(
            "SELECT * FROM Public.A x JOIN b ON true; DO $$ BEGIN PERFORM nextval('s.seq'); END $$",
            PG,
        );
        for want in [
            n(Some("public"), "a"),
            n(None, "b"),
            n(Some("s"), "seq"),
            n(None, "nextval"),
        ] {
            assert!(m.contains(&want), "{want:?} not in {m:?}");
        }
        // The second part of a qualified name is not a name of its own.
        assert!(!m.contains(&n(None, "a")));
    }

    #[test]
    fn inserts_say_which_columns_take_their_default() {
        let i = inserts(
            "INSERT INTO public.t (v) VALUES (1); WITH x AS (INSERT INTO u VALUES (1, 2) RETURNING 1) SELECT 1; \
             INSERT INTO w SELECT 1; INSERT INTO z VALUES (DEFAULT, 1) ON CONFLICT DO NOTHING",
            PG,
        );
        assert_eq!(i.len(), 4, "{i:?}");
        assert_eq!(i[0].table, n(Some("public"), "t"));
        assert!(i[0].takes_default("id", 0) && !i[0].takes_default("v", 1));
        assert_eq!(i[1].table, n(None, "u"));
        assert!(!i[1].takes_default("id", 0) && i[1].takes_default("c", 2));
        assert!(i[2].takes_default("id", 0));
        assert!(i[3].takes_default("id", 0) && !i[3].takes_default("v", 1));
    }

    #[test]
    fn qualified_references_to_a_copy_are_pointed_at_it() {
        let copies = [n(Some("public"), "orders")];
        let sql = "UPDATE public.orders SET q = 1 WHERE public.orders.id = 2; SELECT 'public.orders', x.public.orders FROM \"public\".Orders, other.orders";
        assert_eq!(
            rewrite(sql, PG, &copies, "runner_x_b"),
            "UPDATE runner_x_b.orders SET q = 1 WHERE runner_x_b.orders.id = 2; SELECT 'public.orders', runner_x_b.orders FROM runner_x_b.Orders, other.orders"
        );
        // Catalog-qualified, in every spelling, column references included.
        let sql = "INSERT INTO bench.public.orders VALUES (1); UPDATE \"bench\" . public . \"orders\" SET q = bench.public.orders.q + 1; SELECT other.public.items";
        assert_eq!(
            rewrite(sql, PG, &copies, "runner_x_b"),
            "INSERT INTO runner_x_b.orders VALUES (1); UPDATE runner_x_b . \"orders\" SET q = runner_x_b.orders.q + 1; SELECT other.public.items"
        );
        // Every reading of a three-part name is a mention.
        let m = mentioned("SELECT * FROM bench.public.orders", PG);
        assert!(m.contains(&n(Some("public"), "orders")), "{m:?}");
    }
}
