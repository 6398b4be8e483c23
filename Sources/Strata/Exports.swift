// Generated code refers to GRDB's record protocols (`GRDB.Row`, `GRDB.PersistenceContainer`),
// and apps use GRDB's query interface on generated types: depending on Strata is enough.
@_exported import GRDB
