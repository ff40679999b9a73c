//! This machine's address in a join list.
//!
//! What it is: [`own_address`], which takes `--starter.address` when given, else the one
//! entry of the join list that is an address of this machine (one a socket can be bound
//! to).
//!
//! What it is not: discovery of other machines (the join list names them all).
//!
//! Invariants: the answer is always an entry of the join list; zero or several matches are
//! errors that ask for `--starter.address`.

use std::net::{IpAddr, UdpSocket};

/// Whether `ip` is an address of this machine: binding a socket to it succeeds only then
/// (EADDRNOTAVAIL otherwise).
pub fn is_local(ip: IpAddr) -> bool {
    UdpSocket::bind((ip, 0)).is_ok()
}

/// The entries of `hosts` that are IP addresses of this machine.
pub fn local_entries(hosts: &[String]) -> Vec<IpAddr> {
    hosts
        .iter()
        .filter_map(|h| h.parse::<IpAddr>().ok())
        .filter(|ip| is_local(*ip))
        .collect()
}

/// This machine's entry of `hosts`: `given` if set (it must be in the list), else the one
/// entry that parses as a local interface address.
pub fn own_address(
    hosts: &[String],
    given: Option<&str>,
    local: &[IpAddr],
) -> Result<String, String> {
    if let Some(me) = given {
        return if hosts.iter().any(|h| h == me) {
            Ok(me.to_string())
        } else {
            Err(format!(
                "--starter.address {me} is not in --starter.join ({})",
                hosts.join(",")
            ))
        };
    }
    let mine: Vec<&String> = hosts
        .iter()
        .filter(|h| h.parse::<IpAddr>().is_ok_and(|ip| local.contains(&ip)))
        .collect();
    match mine.as_slice() {
        [me] => Ok((*me).clone()),
        [] => Err(format!(
            "none of this machine's addresses is in --starter.join ({}); name it with --starter.address",
            hosts.join(",")
        )),
        _ => Err(
            "several entries of --starter.join are this machine's; name one with --starter.address"
                .into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_own_address_is_the_one_local_entry() {
        let hosts: Vec<String> = ["10.0.0.1", "10.0.0.2", "db3"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let local: Vec<IpAddr> = vec!["127.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap()];
        assert_eq!(own_address(&hosts, None, &local).unwrap(), "10.0.0.2");
        assert_eq!(own_address(&hosts, Some("db3"), &local).unwrap(), "db3");
        assert!(own_address(&hosts, Some("10.0.0.9"), &local).is_err());
        assert!(own_address(&hosts, None, &["10.0.0.7".parse().unwrap()]).is_err());
        let both: Vec<IpAddr> = vec!["10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap()];
        assert!(own_address(&hosts, None, &both).is_err());
    }

    #[test]
    fn loopback_is_local_and_a_documentation_address_is_not() {
        let hosts: Vec<String> = ["127.0.0.1", "192.0.2.77", "name"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            local_entries(&hosts),
            vec!["127.0.0.1".parse::<IpAddr>().unwrap()]
        );
    }
}
