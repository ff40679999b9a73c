//! The table of client-visible error codes: `errorNum`, name, default HTTP status, message.
//!
//! Names keep ArangoDB's (without the `TRI_ERROR_` prefix) so they grep against its docs.
//! Numbers and statuses follow <https://docs.arangodb.com/3.12/develop/error-codes/>.

/// One row of the table.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ErrorCode {
    /// The `errorNum` sent to clients.
    pub num: u32,
    /// The HTTP status used when the handler does not override it.
    pub http_status: u16,
    /// ArangoDB's name for the code.
    pub name: &'static str,
    /// The default `errorMessage`.
    pub message: &'static str,
}

macro_rules! error_codes {
    ($($name:ident = $num:literal, $status:literal, $msg:literal;)*) => {
        $(
            #[doc = $msg]
            pub const $name: ErrorCode =
                ErrorCode { num: $num, http_status: $status, name: stringify!($name), message: $msg };
        )*
        /// Every code in the table, in table order.
        pub const ALL_CODES: &[ErrorCode] = &[$($name),*];
    };
}

error_codes! {
    // General.
    NO_ERROR                               = 0,     200, "no error";
    FAILED                                 = 1,     500, "failed";
    SYS_ERROR                              = 2,     500, "system error";
    OUT_OF_MEMORY                          = 3,     500, "out of memory";
    INTERNAL                               = 4,     500, "internal error";
    ILLEGAL_NUMBER                         = 5,     400, "illegal number";
    NUMERIC_OVERFLOW                       = 6,     400, "numeric overflow";
    NOT_IMPLEMENTED                        = 9,     501, "not implemented";
    BAD_PARAMETER                          = 10,    400, "bad parameter";
    FORBIDDEN                              = 11,    403, "forbidden";
    CORRUPTED_JSON                         = 13,    400, "invalid JSON";
    CANNOT_WRITE_FILE                      = 16,    500, "cannot write file";
    TYPE_ERROR                             = 17,    400, "type error";
    LOCK_TIMEOUT                           = 18,    500, "lock timeout";
    REQUEST_CANCELED                       = 21,    410, "canceled request";
    SHUTTING_DOWN                          = 30,    503, "shutting down";
    ONLY_ENTERPRISE                        = 31,    501, "only enterprise version";
    RESOURCE_LIMIT                         = 32,    400, "resource limit exceeded";
    CANNOT_READ_FILE                       = 34,    400, "cannot read file";
    DISABLED                               = 36,    403, "disabled";
    // HTTP.
    HTTP_BAD_PARAMETER                     = 400,   400, "bad parameter";
    HTTP_UNAUTHORIZED                      = 401,   401, "unauthorized";
    HTTP_FORBIDDEN                         = 403,   403, "forbidden";
    HTTP_NOT_FOUND                         = 404,   404, "not found";
    HTTP_METHOD_NOT_ALLOWED                = 405,   405, "method not supported";
    HTTP_NOT_ACCEPTABLE                    = 406,   406, "request not acceptable";
    HTTP_REQUEST_TIMEOUT                   = 408,   408, "request timeout";
    HTTP_CONFLICT                          = 409,   409, "conflict";
    HTTP_PRECONDITION_FAILED               = 412,   412, "precondition failed";
    HTTP_REQUEST_ENTITY_TOO_LARGE          = 413,   413, "request entity too large";
    HTTP_REQUEST_URI_TOO_LONG              = 414,   414, "request URI too long";
    HTTP_UNSUPPORTED_MEDIA_TYPE            = 415,   415, "unsupported media type";
    HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE   = 431,   431, "request header fields too large";
    HTTP_SERVER_ERROR                      = 500,   500, "internal server error";
    HTTP_NOT_IMPLEMENTED                   = 501,   501, "not implemented";
    HTTP_SERVICE_UNAVAILABLE               = 503,   503, "service unavailable";
    HTTP_CORRUPTED_JSON                    = 600,   400, "invalid JSON object";
    HTTP_SUPERFLUOUS_SUFFICES              = 601,   400, "superfluous URL suffices";
    // Internal storage.
    ARANGO_ILLEGAL_STATE                   = 1000,  500, "illegal state";
    ARANGO_DATAFILE_SEALED                 = 1002,  500, "datafile sealed";
    ARANGO_READ_ONLY                       = 1004,  403, "read only";
    ARANGO_DUPLICATE_IDENTIFIER            = 1005,  500, "duplicate identifier";
    ARANGO_DATAFILE_UNREADABLE             = 1006,  500, "datafile unreadable";
    ARANGO_DATAFILE_EMPTY                  = 1007,  500, "datafile empty";
    ARANGO_RECOVERY                        = 1008,  500, "logfile recovery error";
    ARANGO_CORRUPTED_DATAFILE              = 1100,  500, "corrupted datafile";
    ARANGO_ILLEGAL_PARAMETER_FILE          = 1101,  500, "illegal or unreadable parameter file";
    ARANGO_CORRUPTED_COLLECTION            = 1102,  500, "corrupted collection";
    ARANGO_FILESYSTEM_FULL                 = 1104,  500, "filesystem full";
    ARANGO_DATADIR_LOCKED                  = 1107,  500, "database directory is locked";
    // User-request storage errors.
    ARANGO_CONFLICT                        = 1200,  409, "conflict";
    ARANGO_DOCUMENT_NOT_FOUND              = 1202,  404, "document not found";
    ARANGO_DATA_SOURCE_NOT_FOUND           = 1203,  404, "collection or view not found";
    ARANGO_COLLECTION_PARAMETER_MISSING    = 1204,  400, "parameter 'collection' not found";
    ARANGO_DOCUMENT_HANDLE_BAD             = 1205,  400, "illegal document identifier";
    ARANGO_DUPLICATE_NAME                  = 1207,  409, "duplicate name";
    ARANGO_ILLEGAL_NAME                    = 1208,  400, "illegal name";
    ARANGO_UNIQUE_CONSTRAINT_VIOLATED      = 1210,  409, "unique constraint violated";
    ARANGO_INDEX_NOT_FOUND                 = 1212,  404, "index not found";
    ARANGO_CROSS_COLLECTION_REQUEST        = 1213,  400, "cross collection request not allowed";
    ARANGO_INDEX_HANDLE_BAD                = 1214,  400, "illegal index identifier";
    ARANGO_DOCUMENT_TOO_LARGE              = 1216,  400, "document too large";
    ARANGO_COLLECTION_TYPE_INVALID         = 1218,  400, "collection type invalid";
    ARANGO_ATTRIBUTE_PARSER_FAILED         = 1220,  400, "parsing attribute name definition failed";
    ARANGO_DOCUMENT_KEY_BAD                = 1221,  400, "illegal document key";
    ARANGO_DOCUMENT_KEY_UNEXPECTED         = 1222,  400, "unexpected document key";
    ARANGO_DATADIR_NOT_WRITABLE            = 1224,  500, "server database directory not writable";
    ARANGO_OUT_OF_KEYS                     = 1225,  500, "out of keys";
    ARANGO_DOCUMENT_KEY_MISSING            = 1226,  400, "missing document key";
    ARANGO_DOCUMENT_TYPE_INVALID           = 1227,  400, "invalid document type";
    ARANGO_DATABASE_NOT_FOUND              = 1228,  404, "database not found";
    ARANGO_DATABASE_NAME_INVALID           = 1229,  400, "database name invalid";
    ARANGO_USE_SYSTEM_DATABASE             = 1230,  403, "operation only allowed in system database";
    ARANGO_INVALID_KEY_GENERATOR           = 1232,  400, "invalid key generator";
    ARANGO_INVALID_EDGE_ATTRIBUTE          = 1233,  400, "edge attribute missing or invalid";
    ARANGO_INDEX_CREATION_FAILED           = 1235,  500, "index creation failed";
    ARANGO_COLLECTION_NOT_UNLOADED         = 1237,  500, "collection must be unloaded";
    ARANGO_COLLECTION_NOT_LOADED           = 1238,  500, "collection not loaded";
    ARANGO_DOCUMENT_REV_BAD                = 1239,  400, "illegal document revision";
    ARANGO_INCOMPLETE_READ                 = 1240,  500, "incomplete read";
    // Storage engine I/O.
    ARANGO_IO_ERROR                        = 1305,  500, "storage engine I/O error";
    // Replication and cluster.
    REPLICATION_WRITE_CONCERN_NOT_FULFILLED = 1429,  403, "write concern not fulfilled";
    CLUSTER_SERVER_UNKNOWN                 = 1449,  400, "got a request from an unknown server";
    CLUSTER_TOO_MANY_SHARDS                = 1450,  400, "too many shards";
    CLUSTER_COULD_NOT_CREATE_COLLECTION_IN_PLAN = 1454,  500, "could not create collection in plan";
    CLUSTER_COULD_NOT_CREATE_COLLECTION    = 1456,  500, "could not create collection";
    CLUSTER_TIMEOUT                        = 1457,  500, "timeout in cluster operation";
    CLUSTER_COULD_NOT_REMOVE_COLLECTION_IN_PLAN = 1458,  500, "could not remove collection from plan";
    CLUSTER_COULD_NOT_CREATE_DATABASE_IN_PLAN = 1460,  500, "could not create database in plan";
    CLUSTER_COULD_NOT_CREATE_DATABASE      = 1461,  500, "could not create database";
    CLUSTER_COULD_NOT_REMOVE_DATABASE_IN_PLAN = 1462,  500, "could not remove database from plan";
    CLUSTER_SHARD_GONE                     = 1464,  500, "no responsible shard found";
    CLUSTER_CONNECTION_LOST                = 1465,  500, "cluster internal HTTP connection broken";
    CLUSTER_MUST_NOT_SPECIFY_KEY           = 1466,  400, "must not specify _key for this collection";
    CLUSTER_GOT_CONTRADICTING_ANSWERS      = 1467,  500, "got contradicting answers from different shards";
    CLUSTER_NOT_ALL_SHARDING_ATTRIBUTES_GIVEN = 1468,  400, "not all sharding attributes given";
    CLUSTER_MUST_NOT_CHANGE_SHARDING_ATTRIBUTES = 1469,  400, "must not change the value of a shard key attribute";
    CLUSTER_UNSUPPORTED                    = 1470,  501, "unsupported operation or parameter for clusters";
    CLUSTER_ONLY_ON_COORDINATOR            = 1471,  501, "this operation is only valid on a coordinator in a cluster";
    CLUSTER_READING_PLAN_AGENCY            = 1472,  500, "error reading Plan in agency";
    CLUSTER_ONLY_ON_DBSERVER               = 1477,  501, "this operation is only valid on a DBserver in a cluster";
    CLUSTER_BACKEND_UNAVAILABLE            = 1478,  503, "A cluster backend which was required for the operation could not be reached";
    CLUSTER_CHAIN_OF_DISTRIBUTESHARDSLIKE  = 1484,  400, "chain of distributeShardsLike references";
    CLUSTER_MUST_NOT_DROP_COLL_OTHER_DISTRIBUTESHARDSLIKE = 1485,  400, "must not drop collection while another has a distributeShardsLike attribute pointing to it";
    CLUSTER_UNKNOWN_DISTRIBUTESHARDSLIKE   = 1486,  400, "must not have a distributeShardsLike attribute pointing to an unknown collection";
    CLUSTER_INSUFFICIENT_DBSERVERS         = 1487,  500, "the number of current dbservers is lower than the requested replicationFactor";
    CLUSTER_COULD_NOT_DROP_FOLLOWER        = 1488,  500, "a follower could not be dropped in agency";
    CLUSTER_SHARD_LEADER_REFUSES_REPLICATION = 1489,  406, "a shard leader refuses to perform a replication operation";
    CLUSTER_SHARD_FOLLOWER_REFUSES_OPERATION = 1490,  406, "a shard follower refuses to perform an operation that is not a replication";
    CLUSTER_SHARD_LEADER_RESIGNED          = 1491,  503, "a (former) shard leader refuses to perform an operation, because it has resigned in the meantime";
    CLUSTER_AGENCY_COMMUNICATION_FAILED    = 1492,  500, "some agency operation failed";
    CLUSTER_LEADERSHIP_CHALLENGE_ONGOING   = 1495,  503, "leadership challenge is ongoing";
    CLUSTER_NOT_LEADER                     = 1496,  503, "not a leader";
    // Queries and cursors.
    QUERY_KILLED                           = 1500,  410, "query killed";
    QUERY_PARSE                            = 1501,  400, "syntax error";
    QUERY_EMPTY                            = 1502,  400, "query is empty";
    QUERY_SCRIPT                           = 1503,  400, "runtime error";
    QUERY_NUMBER_OUT_OF_RANGE              = 1504,  400, "number out of range";
    QUERY_INVALID_GEO_VALUE                = 1505,  400, "invalid geo coordinate value";
    QUERY_VARIABLE_NAME_INVALID            = 1510,  400, "variable name has an invalid format";
    QUERY_VARIABLE_REDECLARED              = 1511,  400, "variable is assigned multiple times";
    QUERY_VARIABLE_NAME_UNKNOWN            = 1512,  400, "unknown variable";
    QUERY_COLLECTION_LOCK_FAILED           = 1521,  400, "unable to read-lock collection";
    QUERY_TOO_MANY_COLLECTIONS             = 1522,  400, "too many collections/shards";
    QUERY_TOO_MUCH_NESTING                 = 1524,  400, "too much nesting or too many objects";
    QUERY_INVALID_OPTIONS_ATTRIBUTE        = 1539,  400, "unknown OPTIONS attribute used";
    QUERY_FUNCTION_NAME_UNKNOWN            = 1540,  400, "usage of unknown function";
    QUERY_FUNCTION_ARGUMENT_NUMBER_MISMATCH= 1541,  400, "invalid number of arguments for function";
    QUERY_FUNCTION_ARGUMENT_TYPE_MISMATCH  = 1542,  400, "invalid argument type in call to function";
    QUERY_INVALID_REGEX                    = 1543,  400, "invalid regex value";
    QUERY_BIND_PARAMETERS_INVALID          = 1550,  400, "invalid structure of bind parameters";
    QUERY_BIND_PARAMETER_MISSING           = 1551,  400, "no value specified for declared bind parameter";
    QUERY_BIND_PARAMETER_UNDECLARED        = 1552,  400, "bind parameter was not declared in the query";
    QUERY_BIND_PARAMETER_TYPE              = 1553,  400, "bind parameter has an invalid value or type";
    QUERY_INVALID_ARITHMETIC_VALUE         = 1561,  400, "invalid arithmetic value";
    QUERY_DIVISION_BY_ZERO                 = 1562,  400, "division by zero";
    QUERY_ARRAY_EXPECTED                   = 1563,  400, "array expected";
    QUERY_COLLECTION_USED_IN_EXPRESSION    = 1568,  400, "collection used as expression operand";
    QUERY_FAIL_CALLED                      = 1569,  400, "FAIL called";
    QUERY_GEO_INDEX_MISSING                = 1570,  400, "no suitable geo index found for geo restriction";
    QUERY_FULLTEXT_INDEX_MISSING           = 1571,  400, "no suitable fulltext index found for fulltext query";
    QUERY_INVALID_DATE_VALUE               = 1572,  400, "invalid date value";
    QUERY_MULTI_MODIFY                     = 1573,  400, "multi-modify query";
    QUERY_INVALID_AGGREGATE_EXPRESSION     = 1574,  400, "invalid aggregate expression";
    QUERY_COMPILE_TIME_OPTIONS             = 1575,  400, "query options must be readable at query compile time";
    QUERY_FORCED_INDEX_HINT_UNUSABLE       = 1577,  400, "could not use forced index hint";
    QUERY_DISALLOWED_DYNAMIC_CALL          = 1578,  400, "disallowed dynamic call";
    QUERY_ACCESS_AFTER_MODIFICATION        = 1579,  400, "access after data-modification";
    QUERY_FUNCTION_INVALID_NAME            = 1580,  400, "invalid user function name";
    QUERY_FUNCTION_NOT_FOUND               = 1582,  404, "user function not found";
    QUERY_NOT_FOUND                        = 1591,  404, "query ID not found";
    QUERY_USER_ASSERT                      = 1593,  400, "assertion failed";
    QUERY_USER_WARN                        = 1594,  400, "warning";
    CURSOR_NOT_FOUND                       = 1600,  404, "cursor not found";
    CURSOR_BUSY                            = 1601,  400, "cursor is busy";
    VALIDATION_FAILED                      = 1620,  400, "Schema violation";
    VALIDATION_BAD_PARAMETER               = 1621,  400, "Invalid schema";
    // Transactions.
    TRANSACTION_INTERNAL                   = 1650,  500, "internal transaction error";
    TRANSACTION_NESTED                     = 1651,  400, "nested transactions detected";
    TRANSACTION_UNREGISTERED_COLLECTION    = 1652,  400, "unregistered collection used in transaction";
    TRANSACTION_DISALLOWED_OPERATION       = 1653,  400, "disallowed operation inside transaction";
    TRANSACTION_ABORTED                    = 1654,  410, "transaction aborted";
    TRANSACTION_NOT_FOUND                  = 1655,  404, "transaction not found";
    // Users.
    USER_INVALID_NAME                      = 1700,  400, "invalid user name";
    USER_INVALID_PASSWORD                  = 1701,  400, "invalid password";
    USER_DUPLICATE                         = 1702,  409, "duplicate user";
    USER_NOT_FOUND                         = 1703,  404, "user not found";
    // Server tasks (`/_api/tasks`).
    TASK_NOT_FOUND                         = 1852,  404, "task not found";
    // Graphs (named graphs, `/_api/gharial`, and AQL graph operations).
    GRAPH_COLLECTION_MULTI_USE             = 1920,  400, "multi use of edge collection in edge def";
    GRAPH_COLLECTION_USE_IN_MULTI_GRAPHS   = 1921,  400, "edge collection already used in edge def";
    GRAPH_CREATE_MISSING_NAME              = 1922,  400, "missing graph name";
    GRAPH_CREATE_MALFORMED_EDGE_DEFINITION = 1923,  400, "malformed edge definition";
    GRAPH_NOT_FOUND                        = 1924,  404, "graph not found";
    GRAPH_DUPLICATE                        = 1925,  409, "graph already exists";
    GRAPH_VERTEX_COL_DOES_NOT_EXIST        = 1926,  404, "vertex collection does not exist or is not part of the graph";
    GRAPH_WRONG_COLLECTION_TYPE_VERTEX     = 1927,  400, "collection not a vertex collection";
    GRAPH_NOT_IN_ORPHAN_COLLECTION         = 1928,  404, "collection is not in list of orphan collections";
    GRAPH_COLLECTION_USED_IN_EDGE_DEF      = 1929,  400, "collection already used in edge def";
    GRAPH_EDGE_COLLECTION_NOT_USED         = 1930,  404, "edge collection not used in graph";
    GRAPH_COLLECTION_USED_IN_ORPHANS       = 1938,  400, "collection used in orphans";
    GRAPH_EDGE_COL_DOES_NOT_EXIST          = 1939,  404, "edge collection does not exist or is not part of the graph";
    GRAPH_INTERNAL_DATA_CORRUPT            = 1941,  500, "internal graph data corrupt";
    GRAPH_MUST_NOT_DROP_COLLECTION         = 1942,  403, "must not drop collection while part of graph";
    GRAPH_CREATE_MALFORMED_ORPHAN_LIST     = 1943,  400, "malformed orphan list";
    GRAPH_EDGE_DEFINITION_IS_DOCUMENT      = 1944,  400, "edge definition collection is a document collection";
    GRAPH_REFERENCED_VERTEX_COLLECTION_NOT_PART_OF_THE_GRAPH = 1947, 400, "referenced vertex collection is not part of the graph";
    GRAPH_NEGATIVE_EDGE_WEIGHT             = 1948,  400, "negative edge weight found";
    // Hot backup.
    HOT_BACKUP_INTERNAL                    = 7001,  500, "hot backup internal error";
    HOT_RESTORE_INTERNAL                   = 7002,  500, "internal hot restore error";
    NO_SUCH_HOT_BACKUP                     = 7007,  404, "no such hot backup set can be found";
    HOT_BACKUP_CONFLICT                    = 7011,  409, "hot backup conflict";
    // Scheduler.
    QUEUE_FULL                             = 21003, 503, "queue is full";
    QUEUE_TIME_REQUIREMENT_VIOLATED        = 21004, 412, "queue time violated";
}

/// Looks a code up by its `errorNum`.
pub fn code_by_num(num: u32) -> Option<ErrorCode> {
    ALL_CODES.iter().copied().find(|c| c.num == num)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_error_num_is_unique() {
        let mut seen = HashSet::new();
        for code in ALL_CODES {
            assert!(
                seen.insert(code.num),
                "errorNum {} appears twice ({})",
                code.num,
                code.name
            );
        }
    }

    #[test]
    fn statuses_follow_the_reference() {
        assert_eq!(ARANGO_DOCUMENT_NOT_FOUND.http_status, 404);
        assert_eq!(ARANGO_UNIQUE_CONSTRAINT_VIOLATED.http_status, 409);
        assert_eq!(HTTP_CORRUPTED_JSON.http_status, 400);
        assert_eq!(QUEUE_FULL.http_status, 503);
        assert_eq!(code_by_num(1228), Some(ARANGO_DATABASE_NOT_FOUND));
        assert_eq!(code_by_num(999_999), None);
    }
}
