//! The tokens of AQL, read from the query text with their positions.
//!
//! What it is: [`lex`] turns the whole query into a vector of [`Token`]s ending with
//! [`Tok::End`]. Reserved keywords are case-insensitive and become [`Tok::Keyword`]; the
//! words that ArangoDB reserves only in context (`KEEP`, `COUNT`, `OPTIONS`, `PRUNE`,
//! `SEARCH`, `TO`, `AT`, `LEAST`) and the special variables (`CURRENT`, `NEW`, `OLD`) stay
//! [`Tok::Ident`], as do names quoted with backticks or forward ticks. `!`, `&&` and `||`
//! are the keywords `NOT`, `AND` and `OR`.
//!
//! What it is not: the grammar. `NOT IN`, `AT LEAST` and `NS::FUNC` are put together by the
//! parser.
//!
//! Invariants: positions are 1-based lines and columns counted in characters; a lexical
//! error (an unterminated string, name or comment, a number out of range) becomes a
//! [`Tok::Error`] token after which nothing is read, so the parser reports it only when it
//! gets that far (an earlier syntax error wins, as in ArangoDB). The [`Tok::End`] token sits
//! where ArangoDB reports an unexpected end: at the last thing read, whitespace and comments
//! included.

use quince_errors::ArangoError;
use serde_json::Number;

use super::error;
use crate::ast::Span;

/// One token with its position.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Token {
    /// What was read.
    pub tok: Tok,
    /// Where it starts.
    pub span: Span,
}

/// The kinds of tokens.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    /// A reserved keyword (any case).
    Keyword(Keyword),
    /// A name: unquoted, or quoted with backticks or forward ticks (unescaped).
    Ident(String),
    /// A string literal in single or double quotes (unescaped).
    String(String),
    /// A number literal; `integer` tells how it was written (ArangoDB's "integer number"
    /// versus "number" in messages), the value is an integer only if it fits `i64`.
    Number { value: Number, integer: bool },
    /// `@name`.
    Bind(String),
    /// `@@name`.
    BindCollection(String),
    /// An operator or punctuation.
    Punct(Punct),
    /// A character that starts no token.
    Invalid,
    /// A lexical error; nothing after it was read.
    Error(Box<ArangoError>),
    /// The end of the query.
    End,
}

/// The reserved keywords of AQL 3.12.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Keyword {
    Aggregate,
    All,
    AllShortestPaths,
    And,
    Any,
    Asc,
    Collect,
    Desc,
    Distinct,
    False,
    Filter,
    For,
    Graph,
    In,
    Inbound,
    Insert,
    Into,
    KPaths,
    KShortestPaths,
    Let,
    Like,
    Limit,
    None,
    Not,
    Null,
    Or,
    Outbound,
    Remove,
    Replace,
    Return,
    ShortestPath,
    Sort,
    True,
    Update,
    Upsert,
    Window,
    With,
}

/// Keyword spellings (upper case) and their keywords.
const KEYWORDS: &[(&str, Keyword)] = &[
    ("AGGREGATE", Keyword::Aggregate),
    ("ALL", Keyword::All),
    ("ALL_SHORTEST_PATHS", Keyword::AllShortestPaths),
    ("AND", Keyword::And),
    ("ANY", Keyword::Any),
    ("ASC", Keyword::Asc),
    ("COLLECT", Keyword::Collect),
    ("DESC", Keyword::Desc),
    ("DISTINCT", Keyword::Distinct),
    ("FALSE", Keyword::False),
    ("FILTER", Keyword::Filter),
    ("FOR", Keyword::For),
    ("GRAPH", Keyword::Graph),
    ("IN", Keyword::In),
    ("INBOUND", Keyword::Inbound),
    ("INSERT", Keyword::Insert),
    ("INTO", Keyword::Into),
    ("K_PATHS", Keyword::KPaths),
    ("K_SHORTEST_PATHS", Keyword::KShortestPaths),
    ("LET", Keyword::Let),
    ("LIKE", Keyword::Like),
    ("LIMIT", Keyword::Limit),
    ("NONE", Keyword::None),
    ("NOT", Keyword::Not),
    ("NULL", Keyword::Null),
    ("OR", Keyword::Or),
    ("OUTBOUND", Keyword::Outbound),
    ("REMOVE", Keyword::Remove),
    ("REPLACE", Keyword::Replace),
    ("RETURN", Keyword::Return),
    ("SHORTEST_PATH", Keyword::ShortestPath),
    ("SORT", Keyword::Sort),
    ("TRUE", Keyword::True),
    ("UPDATE", Keyword::Update),
    ("UPSERT", Keyword::Upsert),
    ("WINDOW", Keyword::Window),
    ("WITH", Keyword::With),
];

impl Keyword {
    /// The keyword spelled `word` (any case), if it is one.
    fn from_word(word: &str) -> Option<Keyword> {
        KEYWORDS
            .iter()
            .find(|(spelling, _)| spelling.eq_ignore_ascii_case(word))
            .map(|&(_, keyword)| keyword)
    }

    /// How ArangoDB's grammar names the keyword in "unexpected ..." messages.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Keyword::For => "FOR declaration",
            Keyword::Let => "LET declaration",
            Keyword::Filter => "FILTER declaration",
            Keyword::Return => "RETURN declaration",
            Keyword::Collect => "COLLECT declaration",
            Keyword::Sort => "SORT declaration",
            Keyword::Limit => "LIMIT declaration",
            Keyword::Window => "WINDOW declaration",
            Keyword::Asc => "ASC keyword",
            Keyword::Desc => "DESC keyword",
            Keyword::In => "IN keyword",
            Keyword::With => "WITH keyword",
            Keyword::Into => "INTO keyword",
            Keyword::Aggregate => "AGGREGATE keyword",
            Keyword::Graph => "GRAPH keyword",
            Keyword::ShortestPath => "SHORTEST_PATH keyword",
            Keyword::KShortestPaths => "K_SHORTEST_PATHS keyword",
            Keyword::KPaths => "K_PATHS keyword",
            Keyword::AllShortestPaths => "ALL_SHORTEST_PATHS keyword",
            Keyword::Distinct => "DISTINCT modifier",
            Keyword::Remove => "REMOVE command",
            Keyword::Insert => "INSERT command",
            Keyword::Update => "UPDATE command",
            Keyword::Replace => "REPLACE command",
            Keyword::Upsert => "UPSERT command",
            Keyword::Null => "null",
            Keyword::True => "true",
            Keyword::False => "false",
            Keyword::Not => "not operator",
            Keyword::And => "and operator",
            Keyword::Or => "or operator",
            Keyword::Like => "like operator",
            Keyword::Outbound => "outbound modifier",
            Keyword::Inbound => "inbound modifier",
            Keyword::Any => "any modifier",
            Keyword::All => "all modifier",
            Keyword::None => "none modifier",
        }
    }
}

/// Operators and punctuation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Punct {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Assign,
    RegexMatch,
    RegexNotMatch,
    Plus,
    Minus,
    Times,
    Div,
    Mod,
    Question,
    Colon,
    Scope,
    Range,
    Comma,
    Dot,
    Open,
    Close,
    ObjectOpen,
    ObjectClose,
    ArrayOpen,
    ArrayClose,
}

impl Punct {
    /// How ArangoDB's grammar names the token in "unexpected ..." messages.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Punct::Eq => "== operator",
            Punct::Ne => "!= operator",
            Punct::Lt => "< operator",
            Punct::Le => "<= operator",
            Punct::Gt => "> operator",
            Punct::Ge => ">= operator",
            Punct::Assign => "assignment",
            // ArangoDB's grammar spells these two reversed.
            Punct::RegexMatch => "~= operator",
            Punct::RegexNotMatch => "~! operator",
            Punct::Plus => "+ operator",
            Punct::Minus => "- operator",
            Punct::Times => "* operator",
            Punct::Div => "/ operator",
            Punct::Mod => "% operator",
            Punct::Question => "?",
            Punct::Colon => ":",
            Punct::Scope => "::",
            Punct::Range => "..",
            Punct::Comma => "\",\"",
            Punct::Dot => "'.'",
            Punct::Open => "(",
            Punct::Close => ")",
            Punct::ObjectOpen => "{",
            Punct::ObjectClose => "}",
            Punct::ArrayOpen => "[",
            Punct::ArrayClose => "]",
        }
    }
}

impl Tok {
    /// How ArangoDB names this token after "unexpected".
    pub(crate) fn describe(&self) -> &'static str {
        match self {
            Tok::Keyword(k) => k.describe(),
            Tok::Ident(_) => "identifier",
            Tok::String(_) => "quoted string",
            Tok::Number { integer: true, .. } => "integer number",
            Tok::Number { integer: false, .. } => "number",
            Tok::Bind(_) => "bind parameter",
            Tok::BindCollection(_) => "bind data source parameter",
            Tok::Punct(p) => p.describe(),
            Tok::Invalid | Tok::Error(_) => "invalid token",
            Tok::End => "end of query string",
        }
    }
}

/// Reads all tokens of `text`, ending with [`Tok::End`] (or a [`Tok::Error`] then `End`).
pub(crate) fn lex(text: &str) -> Vec<Token> {
    let mut lexer = Lexer {
        text,
        chars: text.char_indices().collect(),
        at: 0,
        line: 1,
        column: 1,
        last: Span { line: 1, column: 1 },
    };
    let mut tokens = Vec::new();
    loop {
        if let Err(err) = lexer.skip_trivia() {
            tokens.push(Token {
                tok: Tok::Error(Box::new(err)),
                span: lexer.last,
            });
            break;
        }
        let span = lexer.span();
        if lexer.at >= lexer.chars.len() {
            break;
        }
        lexer.last = span;
        let tok = lexer.token(span);
        let stop = matches!(tok, Tok::Error(_));
        tokens.push(Token { tok, span });
        if stop {
            break;
        }
    }
    tokens.push(Token {
        tok: Tok::End,
        span: lexer.last,
    });
    tokens
}

/// The reading state: the characters, where we are, and the position of the last lexeme.
struct Lexer<'a> {
    /// The query, for error snippets.
    text: &'a str,
    /// The characters with their byte offsets.
    chars: Vec<(usize, char)>,
    /// The index of the next character in `chars`.
    at: usize,
    /// The line of the next character.
    line: u32,
    /// The column of the next character.
    column: u32,
    /// Where the last lexeme (token, whitespace run or comment piece) started; ArangoDB
    /// reports an unexpected end of the query there.
    last: Span,
}

impl Lexer<'_> {
    fn span(&self) -> Span {
        Span {
            line: self.line,
            column: self.column,
        }
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).map(|&(_, c)| c)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek(0)?;
        self.at += 1;
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    /// Skips whitespace and comments, remembering each piece as the last lexeme.
    fn skip_trivia(&mut self) -> Result<(), ArangoError> {
        loop {
            match (self.peek(0), self.peek(1)) {
                (Some('\n'), _) => {
                    // ArangoDB counts the newline's line before it places the newline.
                    let column = self.column;
                    self.bump();
                    self.last = Span {
                        line: self.line,
                        column,
                    };
                }
                (Some(' ' | '\t' | '\r'), _) => {
                    self.last = self.span();
                    while matches!(self.peek(0), Some(' ' | '\t' | '\r')) {
                        self.bump();
                    }
                }
                (Some('/'), Some('/')) => {
                    self.last = self.span();
                    self.bump();
                    self.bump();
                    if !matches!(self.peek(0), None | Some('\n')) {
                        self.last = self.span();
                    }
                    while !matches!(self.peek(0), None | Some('\n')) {
                        self.bump();
                    }
                }
                (Some('/'), Some('*')) => {
                    let start = self.span();
                    self.last = start;
                    self.bump();
                    self.bump();
                    loop {
                        match (self.peek(0), self.peek(1)) {
                            (Some('*'), Some('/')) => {
                                self.last = self.span();
                                self.bump();
                                self.bump();
                                break;
                            }
                            (Some(_), _) => {
                                self.bump();
                            }
                            (None, _) => {
                                return Err(error::syntax(
                                    self.text,
                                    start,
                                    "unexpected unterminated multi-line comment",
                                ))
                            }
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    /// Reads one token starting at the current (non-trivia) character.
    fn token(&mut self, span: Span) -> Tok {
        let c = self.peek(0).unwrap_or('\0');
        let next = self.peek(1);
        if c.is_ascii_alphabetic() || (c == '$' && next.is_some_and(|n| n.is_ascii_alphabetic())) {
            return self.word();
        }
        if c == '_' {
            return self.underscore_word();
        }
        if c.is_ascii_digit() || (c == '.' && next.is_some_and(|n| n.is_ascii_digit())) {
            return self.number(span);
        }
        match c {
            '`' | '´' => return self.quoted(c, span, true),
            '"' | '\'' => return self.quoted(c, span, false),
            '@' => return self.bind(),
            _ => {}
        }
        let two = |a: char, b: char| c == a && next == Some(b);
        let (punct, len) = if two('=', '~') {
            (Some(Punct::RegexMatch), 2)
        } else if two('!', '~') {
            (Some(Punct::RegexNotMatch), 2)
        } else if two('=', '=') {
            (Some(Punct::Eq), 2)
        } else if two('!', '=') {
            (Some(Punct::Ne), 2)
        } else if two('>', '=') {
            (Some(Punct::Ge), 2)
        } else if two('<', '=') {
            (Some(Punct::Le), 2)
        } else if two('&', '&') {
            self.bump();
            self.bump();
            return Tok::Keyword(Keyword::And);
        } else if two('|', '|') {
            self.bump();
            self.bump();
            return Tok::Keyword(Keyword::Or);
        } else if two(':', ':') {
            (Some(Punct::Scope), 2)
        } else if two('.', '.') {
            (Some(Punct::Range), 2)
        } else {
            let single = match c {
                '>' => Some(Punct::Gt),
                '<' => Some(Punct::Lt),
                '=' => Some(Punct::Assign),
                '+' => Some(Punct::Plus),
                '-' => Some(Punct::Minus),
                '*' => Some(Punct::Times),
                '/' => Some(Punct::Div),
                '%' => Some(Punct::Mod),
                '?' => Some(Punct::Question),
                ':' => Some(Punct::Colon),
                ',' => Some(Punct::Comma),
                '.' => Some(Punct::Dot),
                '(' => Some(Punct::Open),
                ')' => Some(Punct::Close),
                '{' => Some(Punct::ObjectOpen),
                '}' => Some(Punct::ObjectClose),
                '[' => Some(Punct::ArrayOpen),
                ']' => Some(Punct::ArrayClose),
                _ => None,
            };
            (single, 1)
        };
        for _ in 0..len {
            self.bump();
        }
        match (punct, c) {
            (Some(p), _) => Tok::Punct(p),
            (None, '!') => Tok::Keyword(Keyword::Not),
            _ => Tok::Invalid,
        }
    }

    /// `$?[a-zA-Z][_a-zA-Z0-9]*`: a keyword or a name.
    fn word(&mut self) -> Tok {
        let mut word = String::new();
        if self.peek(0) == Some('$') {
            word.push('$');
            self.bump();
        }
        while let Some(c) = self
            .peek(0)
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        {
            word.push(c);
            self.bump();
        }
        if !word.starts_with('$') {
            if let Some(keyword) = Keyword::from_word(&word) {
                return Tok::Keyword(keyword);
            }
        }
        Tok::Ident(word)
    }

    /// `_+[a-zA-Z]+[_a-zA-Z0-9]*`: a name starting with underscores; a lone run of
    /// underscores (or underscores before a digit) starts no token.
    fn underscore_word(&mut self) -> Tok {
        let mut n = 0;
        while self.peek(n) == Some('_') {
            n += 1;
        }
        if !self.peek(n).is_some_and(|c| c.is_ascii_alphabetic()) {
            self.bump();
            return Tok::Invalid;
        }
        let mut word = String::new();
        while let Some(c) = self
            .peek(0)
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        {
            word.push(c);
            self.bump();
        }
        Tok::Ident(word)
    }

    /// A string literal or a quoted name, from its opening quote to the matching one.
    fn quoted(&mut self, quote: char, span: Span, name: bool) -> Tok {
        self.bump();
        let mut raw = String::new();
        loop {
            match self.bump() {
                None => {
                    let what = if name { "identifier" } else { "string literal" };
                    return Tok::Error(Box::new(error::syntax(
                        self.text,
                        span,
                        &format!("unexpected unterminated {what}"),
                    )));
                }
                Some('\\') => {
                    raw.push('\\');
                    if let Some(c) = self.bump() {
                        raw.push(c);
                    }
                }
                Some(c) if c == quote => break,
                Some(c) => raw.push(c),
            }
        }
        let value = unescape(&raw);
        if name {
            Tok::Ident(value)
        } else {
            Tok::String(value)
        }
    }

    /// `@name` or `@@name`; a name starts with a letter or digit, or with underscores
    /// followed by a letter or digit.
    fn bind(&mut self) -> Tok {
        let collection = self.peek(1) == Some('@');
        let start = if collection { 2 } else { 1 };
        let mut n = start;
        while self.peek(n) == Some('_') {
            n += 1;
        }
        if !self.peek(n).is_some_and(|c| c.is_ascii_alphanumeric()) {
            self.bump();
            return Tok::Invalid;
        }
        for _ in 0..start {
            self.bump();
        }
        let mut name = String::new();
        while let Some(c) = self
            .peek(0)
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        {
            name.push(c);
            self.bump();
        }
        if collection {
            Tok::BindCollection(name)
        } else {
            Tok::Bind(name)
        }
    }

    /// A number: decimal integer, decimal with fraction and/or exponent, `0x` hex, `0b`
    /// binary. Integers in the `i64` range are integers, anything else a finite `f64`;
    /// a value beyond that is error 1504.
    fn number(&mut self, span: Span) -> Tok {
        let radix = match (self.peek(0), self.peek(1)) {
            (Some('0'), Some('x' | 'X')) if self.peek(2).is_some_and(|c| c.is_ascii_hexdigit()) => {
                16
            }
            (Some('0'), Some('b' | 'B')) if matches!(self.peek(2), Some('0' | '1')) => 2,
            _ => 10,
        };
        if radix != 10 {
            self.bump();
            self.bump();
            let mut digits = String::new();
            while let Some(c) = self.peek(0).filter(|c| c.is_digit(radix)) {
                digits.push(c);
                self.bump();
            }
            return match i64::from_str_radix(&digits, radix) {
                Ok(v) => Tok::Number {
                    value: Number::from(v),
                    integer: true,
                },
                Err(_) => self.out_of_range(span),
            };
        }
        let mut literal = String::new();
        let mut integer = true;
        if self.peek(0) == Some('0') {
            literal.push('0');
            self.bump();
        } else {
            self.digits(&mut literal);
        }
        if self.peek(0) == Some('.') && self.peek(1).is_some_and(|c| c.is_ascii_digit()) {
            integer = false;
            literal.push('.');
            self.bump();
            self.digits(&mut literal);
        }
        if matches!(self.peek(0), Some('e' | 'E')) {
            let sign = usize::from(matches!(self.peek(1), Some('+' | '-')));
            if self.peek(1 + sign).is_some_and(|c| c.is_ascii_digit()) {
                integer = false;
                for _ in 0..=sign {
                    literal.extend(self.bump());
                }
                self.digits(&mut literal);
            }
        }
        if integer {
            if let Ok(v) = literal.parse::<i64>() {
                return Tok::Number {
                    value: Number::from(v),
                    integer: true,
                };
            }
        }
        match literal.parse::<f64>().ok().and_then(Number::from_f64) {
            Some(value) => Tok::Number { value, integer },
            None => self.out_of_range(span),
        }
    }

    fn digits(&mut self, out: &mut String) {
        while let Some(c) = self.peek(0).filter(char::is_ascii_digit) {
            out.push(c);
            self.bump();
        }
    }

    fn out_of_range(&self, span: Span) -> Tok {
        Tok::Error(Box::new(error::positioned(
            quince_errors::QUERY_NUMBER_OUT_OF_RANGE,
            self.text,
            span,
            "number out of range",
        )))
    }
}

/// Resolves the backslash escapes of a string literal or quoted name: `\b \f \n \r \t`,
/// `\uXXXX` (surrogate pairs joined, a lone surrogate becomes U+FFFD), and any other
/// escaped character stands for itself (`\\ \" \' \/ \``).
fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(escaped) = chars.next() else { break };
        match escaped {
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'u' => match hex4(&mut chars) {
                Some(high @ 0xD800..=0xDBFF) => {
                    let mut lookahead = chars.clone();
                    let low = (lookahead.next() == Some('\\') && lookahead.next() == Some('u'))
                        .then(|| hex4(&mut lookahead))
                        .flatten()
                        .filter(|low| (0xDC00..=0xDFFF).contains(low));
                    match low {
                        Some(low) => {
                            chars = lookahead;
                            let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                            out.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
                        }
                        None => out.push('\u{FFFD}'),
                    }
                }
                Some(code) => out.push(char::from_u32(code).unwrap_or('\u{FFFD}')),
                None => out.push('u'),
            },
            other => out.push(other),
        }
    }
    out
}

/// Four hex digits as a code unit, consuming them only if all four are there.
fn hex4(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<u32> {
    let mut lookahead = chars.clone();
    let mut code = 0;
    for _ in 0..4 {
        code = code * 16 + lookahead.next()?.to_digit(16)?;
    }
    *chars = lookahead;
    Some(code)
}

#[cfg(test)]
#[path = "lexer_tests.rs"]
mod tests;
