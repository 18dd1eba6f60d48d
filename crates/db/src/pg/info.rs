//! What the server is and who the run logs in as: the facts a report
//! states ([`PgInfo`]) and the warning for a role whose SQL can act outside
//! any transaction.

use super::connect::{connect, pg};
use crate::info::{powers_warning, DbInfo, PgInfo};
use crate::DbError;
use postgres::Client;

/// Built-in roles whose members can act outside any transaction.
const SERVER_ROLES: &str = "ARRAY['pg_execute_server_program', 'pg_write_server_files', 'pg_read_server_files', 'pg_signal_backend']";

/// Whether the role `url` logs in as is a superuser, and the built-in
/// roles it holds that act outside the database.
fn role_powers(client: &mut Client) -> Result<(bool, Vec<String>), DbError> {
    let row = client
        .query_one(
            &format!(
                "SELECT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user), \
                        ARRAY(SELECT r FROM unnest({SERVER_ROLES}) r \
                              WHERE pg_has_role(current_user, r, 'MEMBER') ORDER BY r)"
            ),
            &[],
        )
        .map_err(pg("read the role's privileges"))?;
    let superuser: Option<bool> = row.try_get(0).map_err(pg("read the role's privileges"))?;
    let roles: Vec<String> = row.try_get(1).map_err(pg("read the role's privileges"))?;
    // A superuser is a member of everything; naming the roles adds nothing.
    let superuser = superuser.unwrap_or(false);
    Ok((superuser, if superuser { Vec::new() } else { roles }))
}

/// The warning of [`PgInfo::role_warning`] for the role of `url`, read now.
pub fn role_warning(url: &str) -> Result<Option<String>, DbError> {
    let (mut client, endpoint) = connect(url)?;
    let (superuser, server_roles) = role_powers(&mut client)?;
    Ok(powers_warning(
        endpoint.user.as_deref(),
        superuser,
        &server_roles,
    ))
}
pub(crate) fn db_info(url: &str) -> Result<DbInfo, DbError> {
    let (mut client, endpoint) = connect(url)?;
    let (superuser, server_roles) = role_powers(&mut client)?;
    let mut one = |sql: &str| -> Result<String, DbError> {
        let row = client.query_one(sql, &[]).map_err(pg("read settings"))?;
        row.try_get(0).map_err(pg("read settings"))
    };
    let version = one("SELECT version()")?;
    let info = PgInfo {
        server_version: one("SHOW server_version")?,
        shared_buffers: one("SHOW shared_buffers")?,
        synchronous_commit: one("SHOW synchronous_commit")?,
        fsync: one("SHOW fsync")?,
        wal_level: one("SHOW wal_level")?,
        transport: if endpoint.unix_socket { "unix" } else { "tcp" }.to_owned(),
        host: endpoint.host,
        port: endpoint.port,
        database: endpoint.database,
        user: endpoint.user,
        superuser: Some(superuser),
        server_roles,
    };
    Ok(DbInfo {
        backend: "postgres".into(),
        version,
        postgres: Some(info),
    })
}
