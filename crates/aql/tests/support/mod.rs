//! A [`FunctionContext`] for tests: an in-memory database with a `persons` collection
//! holding `alice` and `bob`, collected warnings, and a kill switch.

#![allow(dead_code)]

use std::cell::Cell;
use std::sync::Arc;

use quince_aql::functions::{lookup, FunctionContext};
use quince_aql::value::Warning;
use quince_errors::{ArangoError, Result, QUERY_KILLED};
use quince_ops::fake::FakeEngine;
use quince_ops::{
    CollectionType, CreateCollection, DatabaseOps, Engine, WriteKind, WriteOptions, WriteRequest,
};
use serde_json::{json, Value};

pub struct TestContext {
    pub database: Arc<dyn DatabaseOps>,
    pub warnings: Vec<Warning>,
    /// `check_alive` fails once this many checks have passed.
    pub alive_checks_left: Cell<u32>,
    /// `admit` refuses more bytes than this at once.
    pub memory_limit: Cell<u64>,
}

impl TestContext {
    pub fn new() -> TestContext {
        let engine = FakeEngine::new();
        let database = engine.database("_system").unwrap();
        let persons = database
            .create_collection(CreateCollection {
                name: "persons".into(),
                kind: CollectionType::Document,
                wait_for_sync: None,
                is_system: false,
                key_options: None,
                journal_size: None,
                schema: None,
                computed_values: None,
                cache_enabled: None,
            })
            .unwrap();
        let items = vec![
            json!({"_key": "alice", "age": 42}),
            json!({"_key": "bob", "age": 23}),
        ];
        let results = persons.write(WriteRequest::new(
            WriteKind::Insert,
            items,
            WriteOptions::default(),
        ));
        drop(results);
        TestContext {
            database,
            warnings: Vec::new(),
            alive_checks_left: Cell::new(u32::MAX),
            memory_limit: Cell::new(u64::MAX),
        }
    }

    /// Calls a function by name, checking its arity as the planner would.
    pub fn call(&mut self, name: &str, args: &[Value]) -> Result<Value> {
        let function = lookup(name).unwrap_or_else(|| panic!("{name} is registered"));
        assert!(
            args.len() >= function.min_args && args.len() <= function.max_args,
            "{name} called with {} arguments",
            args.len()
        );
        (function.call)(self, args)
    }

    pub fn warning_codes(&self) -> Vec<u32> {
        self.warnings.iter().map(|w| w.code).collect()
    }
}

impl FunctionContext for TestContext {
    fn warn(&mut self, warning: Warning) {
        self.warnings.push(warning);
    }

    fn database(&self) -> &dyn DatabaseOps {
        self.database.as_ref()
    }

    fn check_alive(&self) -> Result<()> {
        let left = self.alive_checks_left.get();
        if left == 0 {
            return Err(ArangoError::new(QUERY_KILLED));
        }
        self.alive_checks_left.set(left - 1);
        Ok(())
    }

    fn admit(&self, bytes: u64) -> Result<()> {
        if bytes > self.memory_limit.get() {
            return Err(ArangoError::new(quince_errors::RESOURCE_LIMIT));
        }
        Ok(())
    }

    fn user(&self) -> Option<&str> {
        Some("root")
    }
}
