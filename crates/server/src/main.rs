//! The `quince` binary: `quince serve` starts the server.

fn main() {
    println!("quince: not yet wired");
}
