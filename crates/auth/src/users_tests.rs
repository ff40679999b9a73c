//! Tests of [`Users`] over a real catalog in a temporary directory.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use quince_db::{Catalog, DbConfig};
use serde_json::json;

use super::*;

fn open_catalog(dir: &Path) -> Arc<Catalog> {
    Catalog::open(DbConfig {
        default_journal_size: 1 << 20,
        sync_interval: Duration::from_millis(50),
        ..DbConfig::new(
            dir.to_path_buf(),
            Arc::new(quince_storage::io::OsFileIo::new()),
        )
    })
    .unwrap()
}

fn new_user(name: &str, password: &str) -> NewUser {
    NewUser {
        name: name.into(),
        password: password.into(),
        active: true,
        extra: Map::new(),
    }
}

#[test]
fn root_is_created_once_and_keeps_its_first_password() {
    let dir = tempfile::tempdir().unwrap();
    {
        let catalog = open_catalog(dir.path());
        let users = Users::open(&*catalog, "first").unwrap();
        let root = users.verify_password(ROOT_USER, "first").expect("root");
        assert_eq!(root.database_level("anything"), Level::ReadWrite);
        assert_eq!(root.collection_level("db", "c"), Level::ReadWrite);
        catalog.shutdown().unwrap();
    }
    let catalog = open_catalog(dir.path());
    let users = Users::open(&*catalog, "second").unwrap();
    assert!(users.verify_password(ROOT_USER, "first").is_some());
    assert!(users.verify_password(ROOT_USER, "second").is_none());
    assert!(users.remove(ROOT_USER).unwrap_err().is(FORBIDDEN));
    catalog.shutdown().unwrap();
}

#[test]
fn accounts_grants_and_tokens_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let token;
    {
        let catalog = open_catalog(dir.path());
        let users = Users::open(&*catalog, "pw").unwrap();
        let mut alice = new_user("alice", "a-pw");
        alice.extra.insert("team".into(), json!("blue"));
        users.create(alice).unwrap();
        users.create(new_user("bob", "b-pw")).unwrap();
        users
            .set_grant("alice", "db1", None, Some(Level::ReadOnly))
            .unwrap();
        users
            .set_grant("alice", "db1", Some("c"), Some(Level::ReadWrite))
            .unwrap();
        token = users
            .create_token("alice", "ci", Some(unix_now_secs() + 3600))
            .unwrap()
            .1;
        users.remove("bob").unwrap();
        catalog.shutdown().unwrap();
    }
    let catalog = open_catalog(dir.path());
    let users = Users::open(&*catalog, "pw").unwrap();
    let names: Vec<String> = users.accounts().iter().map(|a| a.name.clone()).collect();
    assert_eq!(names, ["alice", "root"]);
    let alice = users.verify_password("alice", "a-pw").unwrap();
    assert_eq!(alice.extra["team"], "blue");
    assert_eq!(alice.database_level("db1"), Level::ReadOnly);
    assert_eq!(alice.collection_level("db1", "c"), Level::ReadWrite);
    assert_eq!(alice.collection_level("db1", "d"), Level::ReadOnly);
    assert_eq!(
        users
            .verify_access_token(None, &token)
            .map(|a| a.name.clone()),
        Some("alice".to_string())
    );
    catalog.shutdown().unwrap();
}

#[test]
fn names_passwords_and_duplicates_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_catalog(dir.path());
    let users = Users::open(&*catalog, "pw").unwrap();
    for bad in ["", "a:b", "tab\there", &"x".repeat(USER_NAME_BYTES_MAX + 1)] {
        assert!(users
            .create(new_user(bad, "p"))
            .unwrap_err()
            .is(USER_INVALID_NAME));
    }
    let too_long = "p".repeat(PASSWORD_BYTES_MAX + 1);
    assert!(users
        .create(new_user("carol", &too_long))
        .unwrap_err()
        .is(USER_INVALID_PASSWORD));
    users.create(new_user("carol", "p")).unwrap();
    assert!(users
        .create(new_user("carol", "q"))
        .unwrap_err()
        .is(USER_DUPLICATE));
    let change = AccountChange {
        password: None,
        active: None,
        extra: ExtraChange::Keep,
    };
    assert!(users
        .change("nobody", change)
        .unwrap_err()
        .is(USER_NOT_FOUND));
    assert!(users.remove("nobody").unwrap_err().is(USER_NOT_FOUND));
    // Names with spaces and non-ASCII letters are fine.
    users.create(new_user("Zoë Smith", "p")).unwrap();
    assert!(users.verify_password("Zoë Smith", "p").is_some());
    catalog.shutdown().unwrap();
}

#[test]
fn every_credential_or_permission_change_draws_a_new_generation() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_catalog(dir.path());
    let users = Users::open(&*catalog, "pw").unwrap();
    let g0 = users.create(new_user("dave", "one")).unwrap().generation;
    assert!(users.verify_token_user("dave", Some(g0)).is_some());
    let g1 = users
        .set_grant("dave", "db", None, Some(Level::ReadWrite))
        .unwrap()
        .generation;
    assert_ne!(g0, g1);
    assert!(users.verify_token_user("dave", Some(g0)).is_none());
    let change = AccountChange {
        password: Some("two".into()),
        active: None,
        extra: ExtraChange::Keep,
    };
    let g2 = users.change("dave", change).unwrap().generation;
    assert_ne!(g1, g2);
    assert!(users.verify_token_user("dave", Some(g1)).is_none());
    assert!(users.verify_token_user("dave", Some(g2)).is_some());
    // A token without a generation (made elsewhere with the secret) is as good as the secret.
    assert!(users.verify_token_user("dave", None).is_some());
    users.remove("dave").unwrap();
    assert!(users.verify_token_user("dave", Some(g2)).is_none());
    // A new user of the same name does not revive old tokens.
    let g3 = users.create(new_user("dave", "two")).unwrap().generation;
    assert_ne!(g3, g2);
    assert!(users.verify_token_user("dave", Some(g2)).is_none());
    catalog.shutdown().unwrap();
}

#[test]
fn verified_passwords_are_remembered_until_the_account_changes() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_catalog(dir.path());
    let users = Users::open(&*catalog, "pw").unwrap();
    users.create(new_user("erin", "old")).unwrap();
    assert!(users.verified_before("erin", "old").is_none());
    assert!(users.verify_password("erin", "wrong").is_none());
    assert!(
        users.verified_before("erin", "wrong").is_none(),
        "failures are not cached"
    );
    assert!(users.verify_password("erin", "old").is_some());
    assert!(users.verified_before("erin", "old").is_some());
    let change = AccountChange {
        password: Some("new".into()),
        active: None,
        extra: ExtraChange::Keep,
    };
    users.change("erin", change).unwrap();
    assert!(users.verified_before("erin", "old").is_none());
    assert!(users.verify_password("erin", "old").is_none());
    assert!(users.verify_password("erin", "new").is_some());
    // Deactivation locks the user out, cached or not.
    let deactivate = AccountChange {
        password: None,
        active: Some(false),
        extra: ExtraChange::Keep,
    };
    users.change("erin", deactivate).unwrap();
    assert!(users.verified_before("erin", "new").is_none());
    assert!(users.verify_password("erin", "new").is_none());
    catalog.shutdown().unwrap();
}

#[test]
fn extra_is_merged_by_patch_and_replaced_by_put() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_catalog(dir.path());
    let users = Users::open(&*catalog, "pw").unwrap();
    let mut frank = new_user("frank", "p");
    frank.extra.insert("a".into(), json!(1));
    users.create(frank).unwrap();
    let merge = AccountChange {
        password: None,
        active: None,
        extra: ExtraChange::Merge(json!({"b": 2}).as_object().unwrap().clone()),
    };
    assert_eq!(
        users.change("frank", merge).unwrap().extra,
        *json!({"a": 1, "b": 2}).as_object().unwrap()
    );
    let replace = AccountChange {
        password: None,
        active: Some(false),
        extra: ExtraChange::Replace(json!({"c": 3}).as_object().unwrap().clone()),
    };
    let changed = users.change("frank", replace).unwrap();
    assert_eq!(
        changed.public(),
        json!({"user": "frank", "active": false, "extra": {"c": 3}})
    );
    catalog.shutdown().unwrap();
}

#[test]
fn access_tokens_are_checked_for_owner_expiry_and_revocation() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_catalog(dir.path());
    let users = Users::open(&*catalog, "pw").unwrap();
    users.create(new_user("gina", "p")).unwrap();
    let now = unix_now_secs();
    let (record, token) = users
        .create_token("gina", "deploy", Some(now + 600))
        .unwrap();
    assert_eq!(record.id, 1);
    assert!(users.verify_access_token(Some("gina"), &token).is_some());
    assert!(users.verify_access_token(None, &token).is_some());
    assert!(users.verify_access_token(Some("root"), &token).is_none());
    assert!(users.verify_access_token(None, "v1.nothing").is_none());
    let dup = users
        .create_token("gina", "deploy", Some(now + 600))
        .unwrap_err();
    assert_eq!(dup.status, 409);
    assert!(users.create_token("gina", "past", Some(now)).is_err());
    assert!(users.create_token("gina", "", Some(now + 10)).is_err());
    assert!(users
        .create_token("nobody", "x", Some(now + 10))
        .unwrap_err()
        .is(USER_NOT_FOUND));
    users.delete_token("gina", record.id).unwrap();
    assert!(users.verify_access_token(None, &token).is_none());
    assert_eq!(
        users.delete_token("gina", record.id).unwrap_err().status,
        404
    );
    // Tokens die with their user.
    let (_, second) = users
        .create_token("gina", "again", Some(now + 600))
        .unwrap();
    users.remove("gina").unwrap();
    assert!(users.verify_access_token(None, &second).is_none());
    catalog.shutdown().unwrap();
}

#[test]
fn tokens_made_without_valid_until_never_expire() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_catalog(dir.path());
    let users = Users::open(&*catalog, "pw").unwrap();
    users.create(new_user("hal", "p")).unwrap();
    let (record, token) = users.create_token("hal", "forever", None).unwrap();
    assert_eq!(record.valid_until, crate::NEVER_EXPIRES);
    assert!(record.is_active(u64::MAX - 1), "active at any time");
    assert_eq!(record.describe(unix_now_secs())["active"], true);
    assert!(users.verify_access_token(Some("hal"), &token).is_some());
    // It survives a restart as a token without expiry.
    drop(users);
    let users = Users::open(&*catalog, "pw").unwrap();
    assert!(users.verify_access_token(None, &token).is_some());
    assert_eq!(users.account("hal").unwrap().tokens[0].valid_until, 0);
    catalog.shutdown().unwrap();
}

#[test]
fn dropped_databases_take_their_grants_with_them() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_catalog(dir.path());
    let users = Users::open(&*catalog, "pw").unwrap();
    users.create(new_user("hank", "p")).unwrap();
    users
        .set_grant("hank", "db", None, Some(Level::ReadWrite))
        .unwrap();
    users
        .set_grant("hank", "db", Some("c"), Some(Level::ReadOnly))
        .unwrap();
    users.forget_database("db").unwrap();
    let hank = users.account("hank").unwrap();
    assert_eq!(hank.database_level("db"), Level::None);
    assert_eq!(hank.collection_level("db", "c"), Level::None);
    // Root's wildcard grant is untouched.
    assert_eq!(
        users.account(ROOT_USER).unwrap().database_level("db"),
        Level::ReadWrite
    );
    catalog.shutdown().unwrap();
}

#[test]
fn a_dropped_collection_takes_its_grants_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_catalog(dir.path());
    let users = Users::open(&*catalog, "pw").unwrap();
    users.create(new_user("ivy", "p")).unwrap();
    users
        .set_grant("ivy", "db", None, Some(Level::ReadOnly))
        .unwrap();
    users
        .set_grant("ivy", "db", Some("c"), Some(Level::ReadWrite))
        .unwrap();
    users
        .set_grant("ivy", "db", Some("d"), Some(Level::None))
        .unwrap();
    let before = users.account("ivy").unwrap().generation;
    users.forget_collection("db", "c").unwrap();
    let ivy = users.account("ivy").unwrap();
    // A new collection "c" falls back to the database's level, not the old grant.
    assert_eq!(ivy.collection_level("db", "c"), Level::ReadOnly);
    assert_eq!(ivy.collection_level("db", "d"), Level::None);
    assert_eq!(ivy.database_level("db"), Level::ReadOnly);
    assert_ne!(ivy.generation, before, "tokens issued before are void");
    catalog.shutdown().unwrap();
}
