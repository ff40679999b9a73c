//! Tests of `/_api/document`: statuses, headers and bodies of every form. The scenarios of
//! `single` and `multi` run against both implementations of the operations interface (the local
//! engine on a temporary directory, and the in-memory fake); `durability` and `writes` need the
//! local engine's files.

/// Runs each named scenario (an `async fn(Fixture)`) against the local engine and the fake.
macro_rules! on_every_engine {
    ($($scenario:ident),* $(,)?) => {
        mod local {
            $(
                #[tokio::test]
                async fn $scenario() {
                    super::$scenario(super::Fixture::new()).await
                }
            )*
        }
        mod fake {
            $(
                #[tokio::test]
                async fn $scenario() {
                    super::$scenario(super::Fixture::fake()).await
                }
            )*
        }
    };
}

pub(crate) mod support;

mod durability;
mod multi;
mod single;
mod threads;
mod writes;
