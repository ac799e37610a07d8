// SPDX-License-Identifier: GPL-2.0
/*
 * PostgreSQL's names for its wait events and backend types, per major
 * version, as pg_stat_activity shows them. A wait event is a
 * uint32: the class in the top byte (PG_WAIT_LWLOCK 0x01 ... PG_WAIT_IO
 * 0x0A, utils/wait_event.h), the event in the low 16 bits, numbered from 0
 * in the order of the version's enums (WaitEventActivity, WaitEventClient,
 * WaitEventIPC, WaitEventTimeout, WaitEventIO); LWLock events are tranche
 * IDs (the individual locks of lwlocknames.txt, then BuiltinTrancheIds),
 * Lock events LockTagType values. A value no table of its version names
 * (an extension's tranche or event, a version without tables) stays
 * "Class:0xNNNN": never guessed.
 *
 * PostgreSQL 15's tables are what its own pgstat_get_wait_event() returns
 * for every value (the Debian 15.20 binary, called under gdb by
 * tests/integration/test_postgres_events.py, which checks them again).
 * 14's, 16's and 17's come from their releases' headers (the comments
 * below say which) and were checked against 15's: every difference is an
 * event added, removed or renamed between the versions. A table's NULL
 * entry, like a value past its end, stays a number.
 *
 * A major version's tables are those of its newest minor release known:
 * minor releases only append events to a class's end (a back-patched
 * WalReceiverUpstreamCatchup is IPC's last in 15.20, absent from 15.18),
 * since renumbering would break extensions built against the release
 * before, so an older minor never sends a value its name does not fit.
 * The names are not read from the running binary: Debian's has no symbol
 * table or DWARF for them, only the jump tables pgstat_get_wait_event()
 * was compiled to. That test runs every installed binary past each
 * class's end, so a minor release that appends one fails it.
 */
#include <stdio.h>
#include <string.h>

#include "classify/pg_events.h"
#include "lib/array.h"

/*
 * PostgreSQL 14 (14.13): the values are the enums of its utils/wait_event.h
 * and storage/lwlock.h as pgrx's bindings of that release carry them
 * (pgcentralfoundation/pgrx, pgrx-pg-sys/src/include/pg14.rs, commit
 * 0193fd0f7ad69246e969258d5657befad44e2fbe: PG_VERSION "14.13"); the names
 * are 15's for the same enumerator. 14 differs from 15 by the statistics
 * collector's PgStatMain (Activity 7; 15 removed the process), by lacking
 * 15's ArchiveCleanupCommand, ArchiveCommand, RecoveryEndCommand,
 * RestoreCommand (IPC), VacuumTruncate (Timeout), BaseBackupSync,
 * BaseBackupWrite, VersionFileSync, VersionFileWrite (IO), and the PgStats
 * tranches (15's shared-memory statistics). Its last four IO events
 * (0x46..0x49, logical streaming's change and subxact files) are left
 * numbers: no 14 source of their names was at hand. A second copy of the
 * release's headers agrees enum for enum: pganalyze/libpg_query, branch
 * 14-latest, commit 1577ef7c6c349542149e34ffbfafc244ab942ec6 (PG_VERSION
 * 14.6), src/postgres/include/utils/wait_event.h, storage/lwlock.h, lock.h,
 * miscadmin.h; its storage/lwlocknames.h (generated from lwlocknames.txt)
 * gives the individual LWLocks 0..47, the same as 15's.
 */

/*
 * PostgreSQL 16 (16.4): values from pgrx's pg16.rs (same repository and
 * commit as 14's; PG_VERSION "16.4"), names 15's for the same enumerator,
 * and for the enumerators new in 16 the names of its wait_event.c: Activity
 * LogicalParallelApplyMain; IPC HashGrowBatchesReallocate and
 * HashGrowBucketsReallocate (15's ...Allocate renamed), LogicalApplySendData,
 * LogicalParallelApplyStateChange; Timeout SpinDelay; IO DSMAllocate and
 * RelationMapReplace (15's RelationMapSync renamed). That wait_event.c is
 * sqlrush/pgrac's, a cluster fork of 16.13 that adds classes of its own
 * and leaves PostgreSQL's alone (src/backend/utils/activity/wait_event.c
 * at commit 0a2aa1ab424ed096ade6dcb3954d8443402ac124; configure.ac's
 * AC_INIT 16.13 at 261d79d8a0d91840d1f89e571067480051d8c29f): it names
 * every 16 enumerator as this table does. Tranches 48.. as 15's plus
 * LogicalRepLauncherDSA and LogicalRepLauncherHash. libpg_query's
 * 16-latest (commit 06670290ad39e61805ecacbc6267df61f6ae3d91, PG_VERSION
 * 16.1) agrees enum for enum but for IO's last, VersionFileSync, which a
 * 16 minor release after 16.1 appended (15.20 has it last too); its
 * lwlocknames.h is 14's and 15's.
 */

/*
 * PostgreSQL 17 (17.0): the enums are generated from
 * wait_event_names.txt, sorted by name within each class; values and
 * enumerators from pgrx's pg17.rs (same commit; PG_VERSION "17.0"). The name
 * pg_stat_activity shows is made from the enumerator by
 * generate-wait_event_types.pl (postgres/postgres at 0c1aca46 and
 * pgsql-jp/jpug-doc at 63b312d0, both with 17's InjectionPoint class and
 * pg_wait_events data): each "_"-separated part keeps its first
 * letter and lowercases the rest (WAL_WRITE is "WalWrite", 16's "WALWrite";
 * BUFFER_IO "BufferIo"). libpg_query's 17-latest-dev (commit
 * f4a36d5347ec7d8a74ebbabcde15d617a44ce104, PG_VERSION 17.0) has the same
 * enums in its generated utils/wait_event_types.h, and the individual
 * LWLocks in storage/lwlocknames.h (generated from lwlocklist.h): 17 dropped
 * the SLRU control locks (11, 12, 14, 15, 26, 31, 38: now the *SLRU
 * tranches of the banked SLRUs) and OldSnapshotTimeMap (42), whose slots
 * stay numbers, and added 48..52. Tranches from 53: 16's plus DSMRegistry*,
 * the *SLRU tranches and ParallelVacuumDSA.
 */

/*
 * One list per class, in the order of the enums: each entry names the event
 * at its place from the first major version it is in to the last (0: still
 * in the newest). A version's table is the entries it is in, numbered from
 * 0; where a version renamed, dropped or moved an event, its entry ends and
 * a new one begins. A NULL entry keeps a slot that has no name (its value
 * stays a number). A new major version: end what it changed, add what it
 * added.
 */
struct pg_name {
	unsigned char first, last;
	const char *name;
};

static const struct pg_name pg_lwlock[] = {
	{ 14, 16, "<unassigned:0>" },
	{ 17, 0, NULL },
	{ 14, 0, "ShmemIndex" },
	{ 14, 0, "OidGen" },
	{ 14, 0, "XidGen" },
	{ 14, 0, "ProcArray" },
	{ 14, 0, "SInvalRead" },
	{ 14, 0, "SInvalWrite" },
	{ 14, 0, "WALBufMapping" },
	{ 14, 0, "WALWrite" },
	{ 14, 0, "ControlFile" },
	{ 14, 16, "<unassigned:10>" },
	{ 17, 0, NULL },
	{ 14, 16, "XactSLRU" },
	{ 17, 0, NULL },
	{ 14, 16, "SubtransSLRU" },
	{ 17, 0, NULL },
	{ 14, 0, "MultiXactGen" },
	{ 14, 16, "MultiXactOffsetSLRU" },
	{ 17, 0, NULL },
	{ 14, 16, "MultiXactMemberSLRU" },
	{ 17, 0, NULL },
	{ 14, 0, "RelCacheInit" },
	{ 14, 0, "CheckpointerComm" },
	{ 14, 0, "TwoPhaseState" },
	{ 14, 0, "TablespaceCreate" },
	{ 14, 0, "BtreeVacuum" },
	{ 14, 0, "AddinShmemInit" },
	{ 14, 0, "Autovacuum" },
	{ 14, 0, "AutovacuumSchedule" },
	{ 14, 0, "SyncScan" },
	{ 14, 0, "RelationMapping" },
	{ 14, 16, "NotifySLRU" },
	{ 17, 0, NULL },
	{ 14, 0, "NotifyQueue" },
	{ 14, 0, "SerializableXactHash" },
	{ 14, 0, "SerializableFinishedList" },
	{ 14, 0, "SerializablePredicateList" },
	{ 14, 16, "SerialSLRU" },
	{ 17, 0, NULL },
	{ 14, 0, "SyncRep" },
	{ 14, 0, "BackgroundWorker" },
	{ 14, 0, "DynamicSharedMemoryControl" },
	{ 14, 0, "AutoFile" },
	{ 14, 0, "ReplicationSlotAllocation" },
	{ 14, 0, "ReplicationSlotControl" },
	{ 14, 16, "CommitTsSLRU" },
	{ 17, 0, NULL },
	{ 14, 0, "CommitTs" },
	{ 14, 0, "ReplicationOrigin" },
	{ 14, 0, "MultiXactTruncation" },
	{ 14, 16, "OldSnapshotTimeMap" },
	{ 17, 0, NULL },
	{ 14, 0, "LogicalRepWorker" },
	{ 14, 0, "XactTruncation" },
	{ 14, 16, "<unassigned:45>" },
	{ 17, 0, NULL },
	{ 14, 0, "WrapLimitsVacuum" },
	{ 14, 0, "NotifyQueueTail" },
	{ 17, 0, "WaitEventCustom" },
	{ 17, 0, "WALSummarizer" },
	{ 17, 0, "DSMRegistry" },
	{ 17, 0, "InjectionPoint" },
	{ 17, 0, "SerialControl" },
	{ 14, 0, "XactBuffer" },
	{ 14, 0, "CommitTsBuffer" },
	{ 14, 0, "SubtransBuffer" },
	{ 14, 0, "MultiXactOffsetBuffer" },
	{ 14, 0, "MultiXactMemberBuffer" },
	{ 14, 0, "NotifyBuffer" },
	{ 14, 0, "SerialBuffer" },
	{ 14, 0, "WALInsert" },
	{ 14, 0, "BufferContent" },
	{ 14, 0, "ReplicationOriginState" },
	{ 14, 0, "ReplicationSlotIO" },
	{ 14, 0, "LockFastPath" },
	{ 14, 0, "BufferMapping" },
	{ 14, 0, "LockManager" },
	{ 14, 0, "PredicateLockManager" },
	{ 14, 0, "ParallelHashJoin" },
	{ 14, 0, "ParallelQueryDSA" },
	{ 14, 0, "PerSessionDSA" },
	{ 14, 0, "PerSessionRecordType" },
	{ 14, 0, "PerSessionRecordTypmod" },
	{ 14, 0, "SharedTupleStore" },
	{ 14, 0, "SharedTidBitmap" },
	{ 14, 0, "ParallelAppend" },
	{ 14, 0, "PerXactPredicateList" },
	{ 15, 0, "PgStatsDSA" },
	{ 15, 0, "PgStatsHash" },
	{ 15, 0, "PgStatsData" },
	{ 16, 0, "LogicalRepLauncherDSA" },
	{ 16, 0, "LogicalRepLauncherHash" },
	{ 17, 0, "DSMRegistryDSA" },
	{ 17, 0, "DSMRegistryHash" },
	{ 17, 0, "CommitTsSLRU" },
	{ 17, 0, "MultiXactMemberSLRU" },
	{ 17, 0, "MultiXactOffsetSLRU" },
	{ 17, 0, "NotifySLRU" },
	{ 17, 0, "SerialSLRU" },
	{ 17, 0, "SubtransSLRU" },
	{ 17, 0, "XactSLRU" },
	{ 17, 0, "ParallelVacuumDSA" },
};

static const struct pg_name pg_lock[] = {
	{ 14, 0, "relation" },
	{ 14, 0, "extend" },
	{ 14, 0, "frozenid" },
	{ 14, 0, "page" },
	{ 14, 0, "tuple" },
	{ 14, 0, "transactionid" },
	{ 14, 0, "virtualxid" },
	{ 14, 0, "spectoken" },
	{ 14, 0, "object" },
	{ 14, 0, "userlock" },
	{ 14, 0, "advisory" },
	{ 16, 0, "applytransaction" },
};

static const struct pg_name pg_activity[] = {
	{ 14, 0, "ArchiverMain" },
	{ 14, 16, "AutoVacuumMain" },
	{ 17, 0, "AutovacuumMain" },
	{ 14, 16, "BgWriterHibernate" },
	{ 17, 0, "BgwriterHibernate" },
	{ 14, 16, "BgWriterMain" },
	{ 17, 0, "BgwriterMain" },
	{ 14, 0, "CheckpointerMain" },
	{ 14, 0, "LogicalApplyMain" },
	{ 14, 0, "LogicalLauncherMain" },
	{ 14, 14, "PgStatMain" },
	{ 16, 0, "LogicalParallelApplyMain" },
	{ 14, 0, "RecoveryWalStream" },
	{ 17, 0, "ReplicationSlotsyncMain" },
	{ 17, 0, "ReplicationSlotsyncShutdown" },
	{ 14, 16, "SysLoggerMain" },
	{ 17, 0, "SysloggerMain" },
	{ 14, 0, "WalReceiverMain" },
	{ 14, 0, "WalSenderMain" },
	{ 17, 0, "WalSummarizerWal" },
	{ 14, 0, "WalWriterMain" },
};

static const struct pg_name pg_client[] = {
	{ 14, 0, "ClientRead" },
	{ 14, 0, "ClientWrite" },
	{ 14, 16, "GSSOpenServer" },
	{ 17, 0, "GssOpenServer" },
	{ 14, 16, "LibPQWalReceiverConnect" },
	{ 17, 0, "LibpqwalreceiverConnect" },
	{ 14, 16, "LibPQWalReceiverReceive" },
	{ 17, 0, "LibpqwalreceiverReceive" },
	{ 14, 16, "SSLOpenServer" },
	{ 17, 0, "SslOpenServer" },
	{ 17, 0, "WaitForStandbyConfirmation" },
	{ 14, 16, "WalSenderWaitForWAL" },
	{ 17, 0, "WalSenderWaitForWal" },
	{ 14, 0, "WalSenderWriteData" },
};

static const struct pg_name pg_ipc[] = {
	{ 14, 0, "AppendReady" },
	{ 15, 0, "ArchiveCleanupCommand" },
	{ 15, 0, "ArchiveCommand" },
	{ 14, 0, "BackendTermination" },
	{ 14, 0, "BackupWaitWalArchive" },
	{ 14, 16, "BgWorkerShutdown" },
	{ 17, 0, "BgworkerShutdown" },
	{ 14, 16, "BgWorkerStartup" },
	{ 17, 0, "BgworkerStartup" },
	{ 14, 0, "BtreePage" },
	{ 14, 16, "BufferIO" },
	{ 17, 0, "BufferIo" },
	{ 17, 0, "CheckpointDelayComplete" },
	{ 17, 0, "CheckpointDelayStart" },
	{ 14, 0, "CheckpointDone" },
	{ 14, 0, "CheckpointStart" },
	{ 14, 0, "ExecuteGather" },
	{ 14, 0, "HashBatchAllocate" },
	{ 14, 0, "HashBatchElect" },
	{ 14, 0, "HashBatchLoad" },
	{ 14, 0, "HashBuildAllocate" },
	{ 14, 0, "HashBuildElect" },
	{ 14, 0, "HashBuildHashInner" },
	{ 14, 0, "HashBuildHashOuter" },
	{ 14, 15, "HashGrowBatchesAllocate" },
	{ 14, 0, "HashGrowBatchesDecide" },
	{ 14, 0, "HashGrowBatchesElect" },
	{ 14, 0, "HashGrowBatchesFinish" },
	{ 16, 0, "HashGrowBatchesReallocate" },
	{ 14, 0, "HashGrowBatchesRepartition" },
	{ 14, 15, "HashGrowBucketsAllocate" },
	{ 14, 0, "HashGrowBucketsElect" },
	{ 16, 0, "HashGrowBucketsReallocate" },
	{ 14, 0, "HashGrowBucketsReinsert" },
	{ 16, 0, "LogicalApplySendData" },
	{ 16, 0, "LogicalParallelApplyStateChange" },
	{ 14, 0, "LogicalSyncData" },
	{ 14, 0, "LogicalSyncStateChange" },
	{ 14, 0, "MessageQueueInternal" },
	{ 14, 0, "MessageQueuePutMessage" },
	{ 14, 0, "MessageQueueReceive" },
	{ 14, 0, "MessageQueueSend" },
	{ 17, 0, "MultixactCreation" },
	{ 14, 0, "ParallelBitmapScan" },
	{ 14, 0, "ParallelCreateIndexScan" },
	{ 14, 0, "ParallelFinish" },
	{ 14, 16, "ProcArrayGroupUpdate" },
	{ 17, 0, "ProcarrayGroupUpdate" },
	{ 14, 0, "ProcSignalBarrier" },
	{ 14, 0, "Promote" },
	{ 14, 0, "RecoveryConflictSnapshot" },
	{ 14, 0, "RecoveryConflictTablespace" },
	{ 15, 0, "RecoveryEndCommand" },
	{ 14, 0, "RecoveryPause" },
	{ 14, 0, "ReplicationOriginDrop" },
	{ 14, 0, "ReplicationSlotDrop" },
	{ 15, 0, "RestoreCommand" },
	{ 14, 0, "SafeSnapshot" },
	{ 14, 0, "SyncRep" },
	{ 14, 0, "WalReceiverExit" },
	{ 14, 0, "WalReceiverWaitStart" },
	{ 17, 0, "WalSummaryReady" },
	{ 14, 0, "XactGroupUpdate" },
	{ 15, 15, "WalReceiverUpstreamCatchup" },
};

static const struct pg_name pg_timeout[] = {
	{ 14, 0, "BaseBackupThrottle" },
	{ 15, 0, "CheckpointWriteDelay" },
	{ 14, 0, "PgSleep" },
	{ 14, 0, "RecoveryApplyDelay" },
	{ 14, 0, "RecoveryRetrieveRetryInterval" },
	{ 15, 0, "RegisterSyncRequest" },
	{ 16, 0, "SpinDelay" },
	{ 14, 0, "VacuumDelay" },
	{ 14, 14, "CheckpointWriteDelay" },
	{ 14, 14, "RegisterSyncRequest" },
	{ 15, 0, "VacuumTruncate" },
	{ 17, 0, "WalSummarizerError" },
};

static const struct pg_name pg_io[] = {
	{ 14, 16, "BaseBackupRead" },
	{ 17, 0, "BasebackupRead" },
	{ 15, 16, "BaseBackupSync" },
	{ 17, 0, "BasebackupSync" },
	{ 15, 16, "BaseBackupWrite" },
	{ 17, 0, "BasebackupWrite" },
	{ 14, 16, "BufFileRead" },
	{ 17, 0, "BuffileRead" },
	{ 17, 0, "BuffileTruncate" },
	{ 14, 16, "BufFileWrite" },
	{ 17, 0, "BuffileWrite" },
	{ 14, 16, "BufFileTruncate" },
	{ 14, 0, "ControlFileRead" },
	{ 14, 0, "ControlFileSync" },
	{ 14, 0, "ControlFileSyncUpdate" },
	{ 14, 0, "ControlFileWrite" },
	{ 14, 0, "ControlFileWriteUpdate" },
	{ 14, 0, "CopyFileRead" },
	{ 14, 0, "CopyFileWrite" },
	{ 14, 0, "DataFileExtend" },
	{ 14, 0, "DataFileFlush" },
	{ 14, 0, "DataFileImmediateSync" },
	{ 14, 0, "DataFilePrefetch" },
	{ 14, 0, "DataFileRead" },
	{ 14, 0, "DataFileSync" },
	{ 14, 0, "DataFileTruncate" },
	{ 14, 0, "DataFileWrite" },
	{ 16, 16, "DSMAllocate" },
	{ 17, 0, "DsmAllocate" },
	{ 14, 16, "DSMFillZeroWrite" },
	{ 17, 0, "DsmFillZeroWrite" },
	{ 14, 16, "LockFileAddToDataDirRead" },
	{ 17, 0, "LockFileAddtodatadirRead" },
	{ 14, 16, "LockFileAddToDataDirSync" },
	{ 17, 0, "LockFileAddtodatadirSync" },
	{ 14, 16, "LockFileAddToDataDirWrite" },
	{ 17, 0, "LockFileAddtodatadirWrite" },
	{ 14, 0, "LockFileCreateRead" },
	{ 14, 0, "LockFileCreateSync" },
	{ 14, 0, "LockFileCreateWrite" },
	{ 14, 16, "LockFileReCheckDataDirRead" },
	{ 17, 0, "LockFileRecheckdatadirRead" },
	{ 14, 0, "LogicalRewriteCheckpointSync" },
	{ 14, 0, "LogicalRewriteMappingSync" },
	{ 14, 0, "LogicalRewriteMappingWrite" },
	{ 14, 0, "LogicalRewriteSync" },
	{ 14, 0, "LogicalRewriteTruncate" },
	{ 14, 0, "LogicalRewriteWrite" },
	{ 14, 0, "RelationMapRead" },
	{ 14, 15, "RelationMapSync" },
	{ 16, 0, "RelationMapReplace" },
	{ 14, 0, "RelationMapWrite" },
	{ 14, 0, "ReorderBufferRead" },
	{ 14, 0, "ReorderBufferWrite" },
	{ 14, 0, "ReorderLogicalMappingRead" },
	{ 14, 0, "ReplicationSlotRead" },
	{ 14, 0, "ReplicationSlotRestoreSync" },
	{ 14, 0, "ReplicationSlotSync" },
	{ 14, 0, "ReplicationSlotWrite" },
	{ 14, 16, "SLRUFlushSync" },
	{ 17, 0, "SlruFlushSync" },
	{ 14, 16, "SLRURead" },
	{ 17, 0, "SlruRead" },
	{ 14, 16, "SLRUSync" },
	{ 17, 0, "SlruSync" },
	{ 14, 16, "SLRUWrite" },
	{ 17, 0, "SlruWrite" },
	{ 14, 0, "SnapbuildRead" },
	{ 14, 0, "SnapbuildSync" },
	{ 14, 0, "SnapbuildWrite" },
	{ 14, 0, "TimelineHistoryFileSync" },
	{ 14, 0, "TimelineHistoryFileWrite" },
	{ 14, 0, "TimelineHistoryRead" },
	{ 14, 0, "TimelineHistorySync" },
	{ 14, 0, "TimelineHistoryWrite" },
	{ 14, 0, "TwophaseFileRead" },
	{ 14, 0, "TwophaseFileSync" },
	{ 14, 0, "TwophaseFileWrite" },
	{ 17, 0, "VersionFileSync" },
	{ 15, 0, "VersionFileWrite" },
	{ 14, 16, "WALSenderTimelineHistoryRead" },
	{ 17, 0, "WalsenderTimelineHistoryRead" },
	{ 14, 16, "WALBootstrapSync" },
	{ 17, 0, "WalBootstrapSync" },
	{ 14, 16, "WALBootstrapWrite" },
	{ 17, 0, "WalBootstrapWrite" },
	{ 14, 16, "WALCopyRead" },
	{ 17, 0, "WalCopyRead" },
	{ 14, 16, "WALCopySync" },
	{ 17, 0, "WalCopySync" },
	{ 14, 16, "WALCopyWrite" },
	{ 17, 0, "WalCopyWrite" },
	{ 14, 16, "WALInitSync" },
	{ 17, 0, "WalInitSync" },
	{ 14, 16, "WALInitWrite" },
	{ 17, 0, "WalInitWrite" },
	{ 14, 16, "WALRead" },
	{ 17, 0, "WalRead" },
	{ 17, 0, "WalSummaryRead" },
	{ 17, 0, "WalSummaryWrite" },
	{ 14, 16, "WALSync" },
	{ 17, 0, "WalSync" },
	{ 14, 16, "WALSyncMethodAssign" },
	{ 17, 0, "WalSyncMethodAssign" },
	{ 14, 16, "WALWrite" },
	{ 17, 0, "WalWrite" },
	{ 15, 16, "VersionFileSync" },
};

/*
 * BackendType (miscadmin.h), as GetBackendTypeDesc() names each. 14 still
 * had the statistics collector; 15 removed it (15's checked against its
 * binary); 17 reordered the enum (backends first, then the auxiliary
 * processes, then the logger) and added the slot sync worker and WAL
 * summarizer. 16 sorted it by name after B_INVALID and added the
 * standalone backend: B_ARCHIVER is 1, B_BACKEND 4, B_LOGGER 8 (pgrx's
 * pg16.rs, PG_VERSION "16.4"; its pg14.rs and pg17.rs agree with the 14
 * and 17 tables here).
 */
static const char *const pg14_backend_types[] = {
	"not initialized",   "autovacuum launcher",
	"autovacuum worker", "client backend",
	"background worker", "background writer",
	"checkpointer",	     "startup",
	"walreceiver",	     "walsender",
	"walwriter",	     "archiver",
	"stats collector",   "logger",
};

static const char *const pg15_backend_types[] = {
	"not initialized",
	"autovacuum launcher",
	"autovacuum worker",
	"client backend",
	"background worker",
	"background writer",
	"checkpointer",
	"startup",
	"walreceiver",
	"walsender",
	"walwriter",
	"archiver",
	"logger",
};

static const char *const pg16_backend_types[] = {
	"not initialized",    "archiver",	"autovacuum launcher",
	"autovacuum worker",  "client backend", "background worker",
	"background writer",  "checkpointer",	"logger",
	"standalone backend", "startup",	"walreceiver",
	"walsender",	      "walwriter",
};

static const char *const pg17_backend_types[] = {
	"not initialized",   "client backend",	  "autovacuum launcher", "autovacuum worker",
	"background worker", "walsender",	  "slotsync worker",	 "standalone backend",
	"archiver",	     "background writer", "checkpointer",	 "startup",
	"walreceiver",	     "walsummarizer",	  "walwriter",		 "logger",
};

struct names {
	const char *const *names;
	size_t nr;
};

#define NAMES(a)                                                                                   \
	{                                                                                          \
		a, ARRAY_SIZE(a)                                                                   \
	}

struct pg_names {
	const struct pg_name *entries;
	size_t nr;
};

/* Indexed by class (the wait event's top byte). */
static const struct pg_names classes[PG_WAIT_CLASSES] = {
	[0x01] = NAMES(pg_lwlock), [0x03] = NAMES(pg_lock), [0x05] = NAMES(pg_activity),
	[0x06] = NAMES(pg_client), [0x08] = NAMES(pg_ipc),  [0x09] = NAMES(pg_timeout),
	[0x0A] = NAMES(pg_io),
};

/* What differs between major versions besides the classes' entries. */
struct version_tables {
	unsigned int version;
	struct names backend_types;
	/*
	 * Every event of these classes has the class's own name (14..16: their
	 * pgstat_get_wait_event() names the class, not the event); from 17,
	 * only event 0 of each (WAIT_EVENT_BUFFER_PIN, WAIT_EVENT_EXTENSION).
	 */
	bool bufferpin_named, extension_named;
};

static const struct version_tables versions[] = {
	{
		.version = 14,
		.backend_types = NAMES(pg14_backend_types),
		.bufferpin_named = true,
		.extension_named = true,
	},
	{
		.version = 15,
		.backend_types = NAMES(pg15_backend_types),
		.bufferpin_named = true,
		.extension_named = true,
	},
	{
		.version = 16,
		.backend_types = NAMES(pg16_backend_types),
		.bufferpin_named = true,
		.extension_named = true,
	},
	{
		.version = 17,
		.backend_types = NAMES(pg17_backend_types),
	},
};

/*
 * pgstat_get_wait_event_type()'s names, the same in every version from 14;
 * 17 added PG_WAIT_INJECTIONPOINT 0x0B (utils/wait_event.h), whose events
 * are all registered at run time (WaitEventInjectionPointNew): numbers.
 */
static const char *const class_names[PG_WAIT_CLASSES] = {
	[0x01] = "LWLock", [0x03] = "Lock",	      [0x04] = "BufferPin", [0x05] = "Activity",
	[0x06] = "Client", [0x07] = "Extension",      [0x08] = "IPC",	    [0x09] = "Timeout",
	[0x0A] = "IO",	   [0x0B] = "InjectionPoint",
};

static const struct version_tables *tables_of(unsigned int version)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(versions); i++) {
		if (versions[i].version == version)
			return &versions[i];
	}
	return NULL;
}

static bool in_version(const struct pg_name *entry, unsigned int version)
{
	return entry->first <= version && (!entry->last || version <= entry->last);
}

/*
 * The version's event-th entry of the class, into *name (NULL: no name);
 * false past the end of the version's table. A walk over at most ~110
 * entries, once per value read.
 */
static bool entry_of(unsigned int version, unsigned int class, unsigned int event,
		     const char **name)
{
	const struct pg_names *list = &classes[class];
	size_t i;

	for (i = 0; i < list->nr; i++) {
		if (!in_version(&list->entries[i], version))
			continue;
		if (!event--) {
			*name = list->entries[i].name;
			return true;
		}
	}
	return false;
}

bool pg_events__supported(unsigned int version)
{
	return tables_of(version) != NULL;
}

bool pg_events__wait_event(unsigned int version, uint32_t info, char *buf, size_t size)
{
	const struct version_tables *t = tables_of(version);
	unsigned int class = info >> 24, event = info & 0xffff;
	const char *name = NULL;

	if (!info)
		return false;
	if (class >= PG_WAIT_CLASSES || !class_names[class] || (class == 0x0B && version < 17)) {
		snprintf(buf, size, "0x%08x", info);
		return true;
	}
	if (t && !entry_of(version, class, event, &name)) {
		if (class == 0x04 && (t->bufferpin_named || event == 0))
			name = "BufferPin";
		else if (class == 0x07 && (t->extension_named || event == 0))
			name = "Extension";
	}
	if (name)
		snprintf(buf, size, "%s:%s", class_names[class], name);
	else
		snprintf(buf, size, "%s:0x%04x", class_names[class], event);
	return true;
}

bool pg_events__backend_type(unsigned int version, uint32_t type, char *buf, size_t size)
{
	const struct version_tables *t = tables_of(version);

	if (t && type < t->backend_types.nr)
		snprintf(buf, size, "%s", t->backend_types.names[type]);
	else
		snprintf(buf, size, "0x%x", type);
	return true;
}

/* For the unit tests: a version's table of one class. */
size_t pg_events__class_size(unsigned int version, unsigned int class)
{
	size_t i, nr = 0;

	if (!tables_of(version) || class >= PG_WAIT_CLASSES)
		return 0;
	for (i = 0; i < classes[class].nr; i++)
		nr += in_version(&classes[class].entries[i], version);
	return nr;
}
