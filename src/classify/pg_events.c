// SPDX-License-Identifier: GPL-2.0
/*
 * PostgreSQL's names for its wait events and backend types, per major
 * version (issue #19), as pg_stat_activity shows them. A wait event is a
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
 */
#include <stdio.h>
#include <string.h>

#include "classify/pg_events.h"
#include "lib/array.h"

static const char *const pg15_lwlock[] = {
	"<unassigned:0>",
	"ShmemIndex",
	"OidGen",
	"XidGen",
	"ProcArray",
	"SInvalRead",
	"SInvalWrite",
	"WALBufMapping",
	"WALWrite",
	"ControlFile",
	"<unassigned:10>",
	"XactSLRU",
	"SubtransSLRU",
	"MultiXactGen",
	"MultiXactOffsetSLRU",
	"MultiXactMemberSLRU",
	"RelCacheInit",
	"CheckpointerComm",
	"TwoPhaseState",
	"TablespaceCreate",
	"BtreeVacuum",
	"AddinShmemInit",
	"Autovacuum",
	"AutovacuumSchedule",
	"SyncScan",
	"RelationMapping",
	"NotifySLRU",
	"NotifyQueue",
	"SerializableXactHash",
	"SerializableFinishedList",
	"SerializablePredicateList",
	"SerialSLRU",
	"SyncRep",
	"BackgroundWorker",
	"DynamicSharedMemoryControl",
	"AutoFile",
	"ReplicationSlotAllocation",
	"ReplicationSlotControl",
	"CommitTsSLRU",
	"CommitTs",
	"ReplicationOrigin",
	"MultiXactTruncation",
	"OldSnapshotTimeMap",
	"LogicalRepWorker",
	"XactTruncation",
	"<unassigned:45>",
	"WrapLimitsVacuum",
	"NotifyQueueTail",
	"XactBuffer",
	"CommitTsBuffer",
	"SubtransBuffer",
	"MultiXactOffsetBuffer",
	"MultiXactMemberBuffer",
	"NotifyBuffer",
	"SerialBuffer",
	"WALInsert",
	"BufferContent",
	"ReplicationOriginState",
	"ReplicationSlotIO",
	"LockFastPath",
	"BufferMapping",
	"LockManager",
	"PredicateLockManager",
	"ParallelHashJoin",
	"ParallelQueryDSA",
	"PerSessionDSA",
	"PerSessionRecordType",
	"PerSessionRecordTypmod",
	"SharedTupleStore",
	"SharedTidBitmap",
	"ParallelAppend",
	"PerXactPredicateList",
	"PgStatsDSA",
	"PgStatsHash",
	"PgStatsData",
};

static const char *const pg15_lock[] = {
	"relation",   "extend",	   "frozenid", "page",	   "tuple",    "transactionid",
	"virtualxid", "spectoken", "object",   "userlock", "advisory",
};

static const char *const pg15_activity[] = {
	"ArchiverMain",	    "AutoVacuumMain",	"BgWriterHibernate",   "BgWriterMain",
	"CheckpointerMain", "LogicalApplyMain", "LogicalLauncherMain", "RecoveryWalStream",
	"SysLoggerMain",    "WalReceiverMain",	"WalSenderMain",       "WalWriterMain",
};

static const char *const pg15_client[] = {
	"ClientRead",
	"ClientWrite",
	"GSSOpenServer",
	"LibPQWalReceiverConnect",
	"LibPQWalReceiverReceive",
	"SSLOpenServer",
	"WalSenderWaitForWAL",
	"WalSenderWriteData",
};

static const char *const pg15_ipc[] = {
	"AppendReady",
	"ArchiveCleanupCommand",
	"ArchiveCommand",
	"BackendTermination",
	"BackupWaitWalArchive",
	"BgWorkerShutdown",
	"BgWorkerStartup",
	"BtreePage",
	"BufferIO",
	"CheckpointDone",
	"CheckpointStart",
	"ExecuteGather",
	"HashBatchAllocate",
	"HashBatchElect",
	"HashBatchLoad",
	"HashBuildAllocate",
	"HashBuildElect",
	"HashBuildHashInner",
	"HashBuildHashOuter",
	"HashGrowBatchesAllocate",
	"HashGrowBatchesDecide",
	"HashGrowBatchesElect",
	"HashGrowBatchesFinish",
	"HashGrowBatchesRepartition",
	"HashGrowBucketsAllocate",
	"HashGrowBucketsElect",
	"HashGrowBucketsReinsert",
	"LogicalSyncData",
	"LogicalSyncStateChange",
	"MessageQueueInternal",
	"MessageQueuePutMessage",
	"MessageQueueReceive",
	"MessageQueueSend",
	"ParallelBitmapScan",
	"ParallelCreateIndexScan",
	"ParallelFinish",
	"ProcArrayGroupUpdate",
	"ProcSignalBarrier",
	"Promote",
	"RecoveryConflictSnapshot",
	"RecoveryConflictTablespace",
	"RecoveryEndCommand",
	"RecoveryPause",
	"ReplicationOriginDrop",
	"ReplicationSlotDrop",
	"RestoreCommand",
	"SafeSnapshot",
	"SyncRep",
	"WalReceiverExit",
	"WalReceiverWaitStart",
	"XactGroupUpdate",
	"WalReceiverUpstreamCatchup",
};

static const char *const pg15_timeout[] = {
	"BaseBackupThrottle",
	"CheckpointWriteDelay",
	"PgSleep",
	"RecoveryApplyDelay",
	"RecoveryRetrieveRetryInterval",
	"RegisterSyncRequest",
	"VacuumDelay",
	"VacuumTruncate",
};

static const char *const pg15_io[] = {
	"BaseBackupRead",
	"BaseBackupSync",
	"BaseBackupWrite",
	"BufFileRead",
	"BufFileWrite",
	"BufFileTruncate",
	"ControlFileRead",
	"ControlFileSync",
	"ControlFileSyncUpdate",
	"ControlFileWrite",
	"ControlFileWriteUpdate",
	"CopyFileRead",
	"CopyFileWrite",
	"DataFileExtend",
	"DataFileFlush",
	"DataFileImmediateSync",
	"DataFilePrefetch",
	"DataFileRead",
	"DataFileSync",
	"DataFileTruncate",
	"DataFileWrite",
	"DSMFillZeroWrite",
	"LockFileAddToDataDirRead",
	"LockFileAddToDataDirSync",
	"LockFileAddToDataDirWrite",
	"LockFileCreateRead",
	"LockFileCreateSync",
	"LockFileCreateWrite",
	"LockFileReCheckDataDirRead",
	"LogicalRewriteCheckpointSync",
	"LogicalRewriteMappingSync",
	"LogicalRewriteMappingWrite",
	"LogicalRewriteSync",
	"LogicalRewriteTruncate",
	"LogicalRewriteWrite",
	"RelationMapRead",
	"RelationMapSync",
	"RelationMapWrite",
	"ReorderBufferRead",
	"ReorderBufferWrite",
	"ReorderLogicalMappingRead",
	"ReplicationSlotRead",
	"ReplicationSlotRestoreSync",
	"ReplicationSlotSync",
	"ReplicationSlotWrite",
	"SLRUFlushSync",
	"SLRURead",
	"SLRUSync",
	"SLRUWrite",
	"SnapbuildRead",
	"SnapbuildSync",
	"SnapbuildWrite",
	"TimelineHistoryFileSync",
	"TimelineHistoryFileWrite",
	"TimelineHistoryRead",
	"TimelineHistorySync",
	"TimelineHistoryWrite",
	"TwophaseFileRead",
	"TwophaseFileSync",
	"TwophaseFileWrite",
	"VersionFileWrite",
	"WALSenderTimelineHistoryRead",
	"WALBootstrapSync",
	"WALBootstrapWrite",
	"WALCopyRead",
	"WALCopySync",
	"WALCopyWrite",
	"WALInitSync",
	"WALInitWrite",
	"WALRead",
	"WALSync",
	"WALSyncMethodAssign",
	"WALWrite",
	"VersionFileSync",
};

/*
 * BackendType (miscadmin.h), as GetBackendTypeDesc() names each. 14 still
 * had the statistics collector; 15 removed it (15's checked against its
 * binary); 17 reordered the enum (backends first, then the auxiliary
 * processes, then the logger) and added the slot sync worker and WAL
 * summarizer. 16's (it added the standalone backend) is not here: a
 * source of it was not at hand, and a guessed order would name processes
 * wrongly; its values stay numbers.
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

/* One major version's tables, indexed by class (the wait event's top byte). */
struct version_tables {
	unsigned int version;
	struct names classes[PG_WAIT_CLASSES];
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
		.classes = {
			[0x01] = NAMES(pg15_lwlock),
			[0x03] = NAMES(pg15_lock),
			[0x05] = NAMES(pg15_activity),
			[0x06] = NAMES(pg15_client),
			[0x08] = NAMES(pg15_ipc),
			[0x09] = NAMES(pg15_timeout),
			[0x0A] = NAMES(pg15_io),
		},
		.backend_types = NAMES(pg15_backend_types),
		.bufferpin_named = true,
		.extension_named = true,
	},
	{
		.version = 16,
		.bufferpin_named = true,
		.extension_named = true,
	},
	{
		.version = 17,
		.backend_types = NAMES(pg17_backend_types),
	},
};

/* pgstat_get_wait_event_type()'s names, the same in every version from 14. */
static const char *const class_names[PG_WAIT_CLASSES] = {
	[0x01] = "LWLock",   [0x03] = "Lock",	 [0x04] = "BufferPin",
	[0x05] = "Activity", [0x06] = "Client",	 [0x07] = "Extension",
	[0x08] = "IPC",	     [0x09] = "Timeout", [0x0A] = "IO",
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
	if (class >= PG_WAIT_CLASSES || !class_names[class]) {
		snprintf(buf, size, "0x%08x", info);
		return true;
	}
	if (t && event < t->classes[class].nr)
		name = t->classes[class].names[event];
	else if (t && class == 0x04 && (t->bufferpin_named || event == 0))
		name = "BufferPin";
	else if (t && class == 0x07 && (t->extension_named || event == 0))
		name = "Extension";
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
	const struct version_tables *t = tables_of(version);

	return t && class < PG_WAIT_CLASSES ? t->classes[class].nr : 0;
}
