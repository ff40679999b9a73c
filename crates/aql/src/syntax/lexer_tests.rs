//! Unit tests of the lexer: keywords and contextual words, quoted names, operators,
//! numbers, strings and escapes, bind parameters, comments and positions, lexical errors.

use super::*;

fn toks(text: &str) -> Vec<Tok> {
    lex(text).into_iter().map(|t| t.tok).collect()
}

fn spans(text: &str) -> Vec<(u32, u32)> {
    lex(text)
        .into_iter()
        .map(|t| (t.span.line, t.span.column))
        .collect()
}

fn int(v: i64) -> Tok {
    Tok::Number {
        value: Number::from(v),
        integer: true,
    }
}

fn float(v: f64, integer: bool) -> Tok {
    Tok::Number {
        value: Number::from_f64(v).unwrap(),
        integer,
    }
}

#[test]
fn keywords_are_case_insensitive_and_contextual_words_are_names() {
    assert_eq!(
        toks("for In rEtUrN True keep COUNT options Current NEW"),
        vec![
            Tok::Keyword(Keyword::For),
            Tok::Keyword(Keyword::In),
            Tok::Keyword(Keyword::Return),
            Tok::Keyword(Keyword::True),
            Tok::Ident("keep".into()),
            Tok::Ident("COUNT".into()),
            Tok::Ident("options".into()),
            Tok::Ident("Current".into()),
            Tok::Ident("NEW".into()),
            Tok::End,
        ]
    );
    assert_eq!(
        toks("format $x _key"),
        vec![
            Tok::Ident("format".into()),
            Tok::Ident("$x".into()),
            Tok::Ident("_key".into()),
            Tok::End
        ]
    );
}

#[test]
fn quoted_names_are_names_even_when_keywords() {
    assert_eq!(
        toks("`filter` ´sort´ `a\\`b`"),
        vec![
            Tok::Ident("filter".into()),
            Tok::Ident("sort".into()),
            Tok::Ident("a`b".into()),
            Tok::End
        ]
    );
}

#[test]
fn operators_and_logical_aliases() {
    assert_eq!(
        toks("== != <= >= < > = =~ !~ && || ! :: : .. . ? %"),
        vec![
            Tok::Punct(Punct::Eq),
            Tok::Punct(Punct::Ne),
            Tok::Punct(Punct::Le),
            Tok::Punct(Punct::Ge),
            Tok::Punct(Punct::Lt),
            Tok::Punct(Punct::Gt),
            Tok::Punct(Punct::Assign),
            Tok::Punct(Punct::RegexMatch),
            Tok::Punct(Punct::RegexNotMatch),
            Tok::Keyword(Keyword::And),
            Tok::Keyword(Keyword::Or),
            Tok::Keyword(Keyword::Not),
            Tok::Punct(Punct::Scope),
            Tok::Punct(Punct::Colon),
            Tok::Punct(Punct::Range),
            Tok::Punct(Punct::Dot),
            Tok::Punct(Punct::Question),
            Tok::Punct(Punct::Mod),
            Tok::End
        ]
    );
    assert_eq!(toks("; &"), vec![Tok::Invalid, Tok::Invalid, Tok::End]);
}

#[test]
fn numbers() {
    assert_eq!(
        toks("0 42 0x1F 0b101 1.5 .5 1e3 2E-2"),
        vec![
            int(0),
            int(42),
            int(31),
            int(5),
            float(1.5, false),
            float(0.5, false),
            float(1000.0, false),
            float(0.02, false),
            Tok::End
        ]
    );
    assert_eq!(toks("9223372036854775807"), vec![int(i64::MAX), Tok::End]);
    assert_eq!(
        toks("9223372036854775808"),
        vec![float(9223372036854775808.0, true), Tok::End]
    );
    assert_eq!(
        toks("1..3"),
        vec![int(1), Tok::Punct(Punct::Range), int(3), Tok::End]
    );
    for text in ["1e999", "0xFFFFFFFFFFFFFFFFF"] {
        match &toks(text)[0] {
            Tok::Error(e) => assert_eq!(e.num(), 1504, "{text}"),
            other => panic!("{text}: {other:?}"),
        }
    }
}

#[test]
fn strings_and_escapes() {
    assert_eq!(
        toks(r#""a\"b\n\t\\\/\u00e9\ud83d\ude00" 'it\'s' "x\qy""#),
        vec![
            Tok::String("a\"b\n\t\\/é😀".into()),
            Tok::String("it's".into()),
            Tok::String("xqy".into()),
            Tok::End
        ]
    );
    assert_eq!(
        toks("\"multi\nline\""),
        vec![Tok::String("multi\nline".into()), Tok::End]
    );
}

#[test]
fn bind_parameters() {
    assert_eq!(
        toks("@a @@coll @0 @_x1"),
        vec![
            Tok::Bind("a".into()),
            Tok::BindCollection("coll".into()),
            Tok::Bind("0".into()),
            Tok::Bind("_x1".into()),
            Tok::End
        ]
    );
    assert_eq!(
        toks("@ @_"),
        vec![Tok::Invalid, Tok::Invalid, Tok::Invalid, Tok::End]
    );
}

#[test]
fn comments_and_positions() {
    assert_eq!(
        spans("RETURN /* c\n */ 1 // x"),
        vec![(1, 1), (2, 5), (2, 9)]
    );
    assert_eq!(
        spans("FOR é IN x"),
        vec![(1, 1), (1, 5), (1, 7), (1, 10), (1, 10)]
    );
    assert_eq!(spans("RETURN\n"), vec![(1, 1), (2, 7)]);
}

#[test]
fn unterminated_things_are_errors_at_their_start() {
    for (text, message) in [
        (
            "RETURN \"abc",
            "unexpected unterminated string literal near '\"abc' at position 1:8",
        ),
        (
            "RETURN `abc",
            "unexpected unterminated identifier near '`abc' at position 1:8",
        ),
        (
            "RETURN /* x",
            "unexpected unterminated multi-line comment near '/* x' at position 1:8",
        ),
    ] {
        let tokens = toks(text);
        let Some(Tok::Error(e)) = tokens.iter().find(|t| matches!(t, Tok::Error(_))) else {
            panic!("{text}: {tokens:?}");
        };
        assert_eq!(e.num(), 1501);
        assert!(e.message.contains(message), "{text}: {}", e.message);
    }
}
