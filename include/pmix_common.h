/*
 * zpmix: common definitions of the PMIx standard API (types, constants, attribute keys,
 * callback types and helper macros). Written for zpmix from the PMIx standard's tables.
 */
#ifndef PMIx_COMMON_H
#define PMIx_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <pmix_version.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Symbol visibility: the library is built with hidden visibility, the API is exported. */
#define PMIX_HAVE_VISIBILITY 1
#define PMIX_EXPORT __attribute__((__visibility__("default")))

/****  CONSTANTS AND ATTRIBUTE KEYS  ****/
#define PMIX_MAX_NSLEN 255
#define PMIX_MAX_KEYLEN 511
#define PMIX_RANK_UNDEF UINT32_MAX
#define PMIX_RANK_WILDCARD (UINT32_MAX-1)
#define PMIX_RANK_LOCAL_NODE (UINT32_MAX-2)
#define PMIX_RANK_LOCAL_PEERS (UINT32_MAX-4)
#define PMIX_RANK_INVALID (UINT32_MAX-3)
#define PMIX_RANK_VALID (UINT32_MAX-50)
#define PMIX_APP_WILDCARD UINT32_MAX
#define PMIX_LAUNCHER_RNDZ_URI "PMIX_LAUNCHER_RNDZ_URI"
#define PMIX_LAUNCHER_RNDZ_FILE "PMIX_LAUNCHER_RNDZ_FILE"
#define PMIX_KEEPALIVE_PIPE "PMIX_KEEPALIVE_PIPE"
#define PMIX_ATTR_UNDEF "pmix.undef"
#define PMIX_EXTERNAL_PROGRESS "pmix.evext"      /* bool */
#define PMIX_SERVER_TOOL_SUPPORT "pmix.srvr.tool" /* bool */
#define PMIX_SERVER_REMOTE_CONNECTIONS "pmix.srvr.remote" /* bool */
#define PMIX_SERVER_SYSTEM_SUPPORT "pmix.srvr.sys" /* bool */
#define PMIX_SERVER_SESSION_SUPPORT "pmix.srvr.sess" /* bool */
#define PMIX_SERVER_TMPDIR "pmix.srvr.tmpdir"    /* char* */
#define PMIX_SYSTEM_TMPDIR "pmix.sys.tmpdir"     /* char* */
#define PMIX_SERVER_SHARE_TOPOLOGY "pmix.srvr.share" /* bool */
#define PMIX_SERVER_ENABLE_MONITORING "pmix.srv.monitor" /* bool */
#define PMIX_SERVER_NSPACE "pmix.srv.nspace"     /* char* */
#define PMIX_SERVER_RANK "pmix.srv.rank"         /* pmix_rank_t */
#define PMIX_SERVER_GATEWAY "pmix.srv.gway"      /* bool */
#define PMIX_SERVER_SCHEDULER "pmix.srv.sched"   /* bool */
#define PMIX_SERVER_START_TIME "pmix.srv.strtime" /* char* */
#define PMIX_HOMOGENEOUS_SYSTEM "pmix.homo"      /* bool */
#define PMIX_SINGLETON "pmix.singleton"          /* char* */
#define PMIX_BIND_PROGRESS_THREAD "pmix.bind.pt" /* char* */
#define PMIX_BIND_REQUIRED "pmix.bind.reqd"      /* bool */
#define PMIX_TOOL_NSPACE "pmix.tool.nspace"      /* char* */
#define PMIX_TOOL_RANK "pmix.tool.rank"          /* uint32_t */
#define PMIX_SERVER_PIDINFO "pmix.srvr.pidinfo"  /* pid_t */
#define PMIX_CONNECT_TO_SYSTEM "pmix.cnct.sys"   /* bool */
#define PMIX_CONNECT_SYSTEM_FIRST "pmix.cnct.sys.first" /* bool */
#define PMIX_SERVER_URI "pmix.srvr.uri"          /* char* */
#define PMIX_MYSERVER_URI "pmix.mysrvr.uri"      /* char* */
#define PMIX_SERVER_HOSTNAME "pmix.srvr.host"    /* char* */
#define PMIX_CONNECT_MAX_RETRIES "pmix.tool.mretries" /* uint32_t */
#define PMIX_CONNECT_RETRY_DELAY "pmix.tool.retry" /* uint32_t */
#define PMIX_TOOL_DO_NOT_CONNECT "pmix.tool.nocon" /* bool */
#define PMIX_TOOL_CONNECT_OPTIONAL "pmix.tool.conopt" /* bool */
#define PMIX_LAUNCHER "pmix.tool.launcher"       /* bool */
#define PMIX_LAUNCHER_RENDEZVOUS_FILE "pmix.tool.lncrnd" /* char* */
#define PMIX_TOOL_ATTACHMENT_FILE "pmix.tool.attach" /* char* */
#define PMIX_PRIMARY_SERVER "pmix.pri.srvr"      /* bool */
#define PMIX_NOHUP "pmix.nohup"                  /* bool */
#define PMIX_LAUNCHER_DAEMON "pmix.lnch.dmn"     /* char* */
#define PMIX_EXEC_AGENT "pmix.exec.agnt"         /* char* */
#define PMIX_LAUNCH_DIRECTIVES "pmix.lnch.dirs"  /* pmix_data_array_t* */
#define PMIX_USERID "pmix.euid"                  /* uint32_t */
#define PMIX_GRPID "pmix.egid"                   /* uint32_t */
#define PMIX_VERSION_INFO "pmix.version"         /* char* */
#define PMIX_REQUESTOR_IS_TOOL "pmix.req.tool"   /* bool */
#define PMIX_REQUESTOR_IS_CLIENT "pmix.req.client" /* bool */
#define PMIX_PSET_NAME "pmix.pset.nm"            /* char* */
#define PMIX_PSET_NAMES "pmix.pset.nms"          /* pmix_data_array_t* */
#define PMIX_PSET_MEMBERS "pmix.pset.mems"       /* pmix_data_array_t* */
#define PMIX_REINCARNATION "pmix.reinc"          /* uint32_t */
#define PMIX_PROGRAMMING_MODEL "pmix.pgm.model"  /* char* */
#define PMIX_MODEL_LIBRARY_NAME "pmix.mdl.name"  /* char* */
#define PMIX_MODEL_LIBRARY_VERSION "pmix.mld.vrs" /* char* */
#define PMIX_THREADING_MODEL "pmix.threads"      /* char* */
#define PMIX_MODEL_NUM_THREADS "pmix.mdl.nthrds" /* uint64_t */
#define PMIX_MODEL_NUM_CPUS "pmix.mdl.ncpu"      /* uint64_t */
#define PMIX_MODEL_CPU_TYPE "pmix.mdl.cputype"   /* char* */
#define PMIX_MODEL_PHASE_NAME "pmix.mdl.phase"   /* char* */
#define PMIX_MODEL_PHASE_TYPE "pmix.mdl.ptype"   /* char* */
#define PMIX_MODEL_AFFINITY_POLICY "pmix.mdl.tap" /* char* */
#define PMIX_TCP_REPORT_URI "pmix.tcp.repuri"    /* char* */
#define PMIX_TCP_URI "pmix.tcp.uri"              /* char* */
#define PMIX_TCP_IF_INCLUDE "pmix.tcp.ifinclude" /* char* */
#define PMIX_TCP_IF_EXCLUDE "pmix.tcp.ifexclude" /* char* */
#define PMIX_TCP_IPV4_PORT "pmix.tcp.ipv4"       /* int */
#define PMIX_TCP_IPV6_PORT "pmix.tcp.ipv6"       /* int */
#define PMIX_TCP_DISABLE_IPV4 "pmix.tcp.disipv4" /* bool */
#define PMIX_TCP_DISABLE_IPV6 "pmix.tcp.disipv6" /* bool */
#define PMIX_CPUSET "pmix.cpuset"                /* char* */
#define PMIX_CPUSET_BITMAP "pmix.bitmap"         /* pmix_cpuset_t* */
#define PMIX_CREDENTIAL "pmix.cred"              /* char* */
#define PMIX_SPAWNED "pmix.spawned"              /* bool */
#define PMIX_NODE_OVERSUBSCRIBED "pmix.ndosub"   /* bool */
#define PMIX_TMPDIR "pmix.tmpdir"                /* char* */
#define PMIX_NSDIR "pmix.nsdir"                  /* char* */
#define PMIX_PROCDIR "pmix.pdir"                 /* char* */
#define PMIX_TDIR_RMCLEAN "pmix.tdir.rmclean"    /* bool */
#define PMIX_CLUSTER_ID "pmix.clid"              /* char* */
#define PMIX_PROCID "pmix.procid"                /* pmix_proc_t* */
#define PMIX_NSPACE "pmix.nspace"                /* char* */
#define PMIX_JOBID "pmix.jobid"                  /* char* */
#define PMIX_APPNUM "pmix.appnum"                /* uint32_t */
#define PMIX_RANK "pmix.rank"                    /* pmix_rank_t */
#define PMIX_GLOBAL_RANK "pmix.grank"            /* pmix_rank_t */
#define PMIX_APP_RANK "pmix.apprank"             /* pmix_rank_t */
#define PMIX_NPROC_OFFSET "pmix.offset"          /* pmix_rank_t */
#define PMIX_LOCAL_RANK "pmix.lrank"             /* uint16_t */
#define PMIX_NODE_RANK "pmix.nrank"              /* uint16_t */
#define PMIX_PACKAGE_RANK "pmix.pkgrank"         /* uint16_t */
#define PMIX_LOCALLDR "pmix.lldr"                /* pmix_rank_t */
#define PMIX_APPLDR "pmix.aldr"                  /* pmix_rank_t */
#define PMIX_PROC_PID "pmix.ppid"                /* pid_t */
#define PMIX_SESSION_ID "pmix.session.id"        /* uint32_t */
#define PMIX_NODE_LIST "pmix.nlist"              /* char* */
#define PMIX_ALLOCATED_NODELIST "pmix.alist"     /* char* */
#define PMIX_HOSTNAME "pmix.hname"               /* char* */
#define PMIX_HOSTNAME_ALIASES "pmix.alias"       /* char* */
#define PMIX_HOSTNAME_KEEP_FQDN "pmix.fqdn"      /* bool */
#define PMIX_NODEID "pmix.nodeid"                /* uint32_t */
#define PMIX_LOCAL_PEERS "pmix.lpeers"           /* char* */
#define PMIX_LOCAL_PROCS "pmix.lprocs"           /* pmix_data_array_t* */
#define PMIX_LOCAL_CPUSETS "pmix.lcpus"          /* char* */
#define PMIX_PARENT_ID "pmix.parent"             /* pmix_proc_t* */
#define PMIX_EXIT_CODE "pmix.exit.code"          /* int */
#define PMIX_UNIV_SIZE "pmix.univ.size"          /* uint32_t */
#define PMIX_JOB_SIZE "pmix.job.size"            /* uint32_t */
#define PMIX_JOB_NUM_APPS "pmix.job.napps"       /* uint32_t */
#define PMIX_APP_SIZE "pmix.app.size"            /* uint32_t */
#define PMIX_LOCAL_SIZE "pmix.local.size"        /* uint32_t */
#define PMIX_NODE_SIZE "pmix.node.size"          /* uint32_t */
#define PMIX_MAX_PROCS "pmix.max.size"           /* uint32_t */
#define PMIX_NUM_SLOTS "pmix.num.slots"          /* uint32_t */
#define PMIX_NUM_NODES "pmix.num.nodes"          /* uint32_t */
#define PMIX_NUM_ALLOCATED_NODES "pmix.num.anodes" /* uint32_t */
#define PMIX_AVAIL_PHYS_MEMORY "pmix.pmem"       /* uint64_t */
#define PMIX_DAEMON_MEMORY "pmix.dmn.mem"        /* float */
#define PMIX_CLIENT_AVG_MEMORY "pmix.cl.mem.avg" /* float */
#define PMIX_TOPOLOGY2 "pmix.topo2"              /* pmix_topology_t* */
#define PMIX_LOCALITY_STRING "pmix.locstr"       /* char* */
#define PMIX_COLLECT_DATA "pmix.collect"         /* bool */
#define PMIX_ALL_CLONES_PARTICIPATE "pmix.clone.part" /* bool */
#define PMIX_COLLECT_GENERATED_JOB_INFO "pmix.collect.gen" /* bool */
#define PMIX_TIMEOUT "pmix.timeout"              /* int */
#define PMIX_IMMEDIATE "pmix.immediate"          /* bool */
#define PMIX_WAIT "pmix.wait"                    /* int */
#define PMIX_NOTIFY_COMPLETION "pmix.notecomp"   /* bool */
#define PMIX_RANGE "pmix.range"                  /* pmix_data_range_t */
#define PMIX_PERSISTENCE "pmix.persist"          /* pmix_persistence_t */
#define PMIX_DATA_SCOPE "pmix.scope"             /* pmix_scope_t */
#define PMIX_OPTIONAL "pmix.optional"            /* bool */
#define PMIX_GET_STATIC_VALUES "pmix.get.static" /* bool */
#define PMIX_GET_POINTER_VALUES "pmix.get.pntrs" /* bool */
#define PMIX_EMBED_BARRIER "pmix.embed.barrier"  /* bool */
#define PMIX_JOB_TERM_STATUS "pmix.job.term.status" /* pmix_status_t */
#define PMIX_PROC_TERM_STATUS "pmix.proc.term.status" /* pmix_status_t */
#define PMIX_PROC_STATE_STATUS "pmix.proc.state" /* pmix_proc_state_t */
#define PMIX_GET_REFRESH_CACHE "pmix.get.refresh" /* bool */
#define PMIX_ACCESS_PERMISSIONS "pmix.aperms"    /* pmix_data_array_t* */
#define PMIX_ACCESS_USERIDS "pmix.auids"         /* pmix_data_array_t* */
#define PMIX_ACCESS_GRPIDS "pmix.agids"          /* pmix_data_array_t* */
#define PMIX_WAIT_FOR_CONNECTION "pmix.wait.conn" /* bool */
#define PMIX_QUALIFIED_VALUE "pmix.qual.val"     /* pmix_data_array_t* */
#define PMIX_REGISTER_NODATA "pmix.reg.nodata"   /* bool */
#define PMIX_NODE_MAP "pmix.nmap"                /* char* */
#define PMIX_NODE_MAP_RAW "pmix.nmap.raw"        /* char* */
#define PMIX_PROC_MAP "pmix.pmap"                /* char* */
#define PMIX_PROC_MAP_RAW "pmix.pmap.raw"        /* char* */
#define PMIX_ANL_MAP "pmix.anlmap"               /* char* */
#define PMIX_APP_MAP_TYPE "pmix.apmap.type"      /* char* */
#define PMIX_APP_MAP_REGEX "pmix.apmap.regex"    /* char* */
#define PMIX_REQUIRED_KEY "pmix.req.key"         /* char* */
#define PMIX_LOCAL_COLLECTIVE_STATUS "pmix.loc.col.st" /* pmix_status_t */
#define PMIX_SORTED_PROC_ARRAY "pmix.sorted.parr" /* bool */
#define PMIX_EVENT_HDLR_NAME "pmix.evname"       /* char* */
#define PMIX_EVENT_HDLR_FIRST "pmix.evfirst"     /* bool */
#define PMIX_EVENT_HDLR_LAST "pmix.evlast"       /* bool */
#define PMIX_EVENT_HDLR_FIRST_IN_CATEGORY "pmix.evfirstcat" /* bool */
#define PMIX_EVENT_HDLR_LAST_IN_CATEGORY "pmix.evlastcat" /* bool */
#define PMIX_EVENT_HDLR_BEFORE "pmix.evbefore"   /* char* */
#define PMIX_EVENT_HDLR_AFTER "pmix.evafter"     /* char* */
#define PMIX_EVENT_HDLR_PREPEND "pmix.evprepend" /* bool */
#define PMIX_EVENT_HDLR_APPEND "pmix.evappend"   /* bool */
#define PMIX_EVENT_CUSTOM_RANGE "pmix.evrange"   /* pmix_data_array_t* */
#define PMIX_EVENT_AFFECTED_PROC "pmix.evproc"   /* pmix_proc_t* */
#define PMIX_EVENT_AFFECTED_PROCS "pmix.evaffected" /* pmix_data_array_t* */
#define PMIX_EVENT_NON_DEFAULT "pmix.evnondef"   /* bool */
#define PMIX_EVENT_RETURN_OBJECT "pmix.evobject" /* void* */
#define PMIX_EVENT_DO_NOT_CACHE "pmix.evnocache" /* bool */
#define PMIX_EVENT_SILENT_TERMINATION "pmix.evsilentterm" /* bool */
#define PMIX_EVENT_PROXY "pmix.evproxy"          /* pmix_proc_t* */
#define PMIX_EVENT_TEXT_MESSAGE "pmix.evtext"    /* char* */
#define PMIX_EVENT_TIMESTAMP "pmix.evtstamp"     /* time_t */
#define PMIX_EVENT_ONESHOT "pmix.evone"          /* bool */
#define PMIX_EVENT_TERMINATE_SESSION "pmix.evterm.sess" /* bool */
#define PMIX_EVENT_TERMINATE_JOB "pmix.evterm.job" /* bool */
#define PMIX_EVENT_TERMINATE_NODE "pmix.evterm.node" /* bool */
#define PMIX_EVENT_TERMINATE_PROC "pmix.evterm.proc" /* bool */
#define PMIX_EVENT_ACTION_TIMEOUT "pmix.evtimeout" /* int */
#define PMIX_PERSONALITY "pmix.pers"             /* char* */
#define PMIX_HOST "pmix.host"                    /* char* */
#define PMIX_HOSTFILE "pmix.hostfile"            /* char* */
#define PMIX_ADD_HOST "pmix.addhost"             /* char* */
#define PMIX_ADD_HOSTFILE "pmix.addhostfile"     /* char* */
#define PMIX_PREFIX "pmix.prefix"                /* char* */
#define PMIX_WDIR "pmix.wdir"                    /* char* */
#define PMIX_WDIR_USER_SPECIFIED "pmix.wdir.user" /* bool */
#define PMIX_DISPLAY_MAP "pmix.dispmap"          /* bool */
#define PMIX_DISPLAY_MAP_DETAILED "pmix.dispmapdet" /* bool */
#define PMIX_DISPLAY_ALLOCATION "pmix.dispalloc" /* bool */
#define PMIX_DISPLAY_TOPOLOGY "pmix.disptopo"    /* char* */
#define PMIX_PPR "pmix.ppr"                      /* char* */
#define PMIX_MAPBY "pmix.mapby"                  /* char* */
#define PMIX_RANKBY "pmix.rankby"                /* char* */
#define PMIX_BINDTO "pmix.bindto"                /* char* */
#define PMIX_PRELOAD_BIN "pmix.preloadbin"       /* bool */
#define PMIX_PRELOAD_FILES "pmix.preloadfiles"   /* char* */
#define PMIX_STDIN_TGT "pmix.stdin"              /* pmix_proc_t* */
#define PMIX_DEBUGGER_DAEMONS "pmix.debugger"    /* bool */
#define PMIX_COSPAWN_APP "pmix.cospawn"          /* bool */
#define PMIX_COLOCATE_PROCS "pmix.colproc"       /* pmix_data_array_t* */
#define PMIX_COLOCATE_NPERPROC "pmix.colnum.proc" /* uint16_t */
#define PMIX_COLOCATE_NPERNODE "pmix.colnum.node" /* uint16_t */
#define PMIX_SET_SESSION_CWD "pmix.ssncwd"       /* bool */
#define PMIX_INDEX_ARGV "pmix.indxargv"          /* bool */
#define PMIX_CPUS_PER_PROC "pmix.cpuperproc"     /* uint32_t */
#define PMIX_NO_PROCS_ON_HEAD "pmix.nolocal"     /* bool */
#define PMIX_NO_OVERSUBSCRIBE "pmix.noover"      /* bool */
#define PMIX_REPORT_BINDINGS "pmix.repbind"      /* bool */
#define PMIX_CPU_LIST "pmix.cpulist"             /* char* */
#define PMIX_JOB_RECOVERABLE "pmix.recover"      /* bool */
#define PMIX_JOB_CONTINUOUS "pmix.continuous"    /* bool */
#define PMIX_MAX_RESTARTS "pmix.maxrestarts"     /* uint32_t */
#define PMIX_FWD_STDIN "pmix.fwd.stdin"          /* bool */
#define PMIX_FWD_STDOUT "pmix.fwd.stdout"        /* bool */
#define PMIX_FWD_STDERR "pmix.fwd.stderr"        /* bool */
#define PMIX_FWD_STDDIAG "pmix.fwd.stddiag"      /* bool */
#define PMIX_SPAWN_TOOL "pmix.spwn.tool"         /* bool */
#define PMIX_CMD_LINE "pmix.cmd.line"            /* char* */
#define PMIX_FORKEXEC_AGENT "pmix.fe.agnt"       /* char* */
#define PMIX_JOB_TIMEOUT "pmix.job.time"         /* int */
#define PMIX_SPAWN_TIMEOUT "pmix.sp.time"        /* int */
#define PMIX_TIMEOUT_STACKTRACES "pmix.tim.stack" /* bool */
#define PMIX_TIMEOUT_REPORT_STATE "pmix.tim.state" /* bool */
#define PMIX_APP_ARGV "pmix.app.argv"            /* char* */
#define PMIX_NOTIFY_JOB_EVENTS "pmix.note.jev"   /* bool */
#define PMIX_NOTIFY_PROC_TERMINATION "pmix.noteproc" /* bool */
#define PMIX_NOTIFY_PROC_ABNORMAL_TERMINATION "pmix.noteabproc" /* bool */
#define PMIX_ENVARS_HARVESTED "pmix.evar.hvstd"  /* bool */
#define PMIX_RUNTIME_OPTIONS "pmix.runopt"       /* char* */
#define PMIX_ABORT_NON_ZERO_TERM "pmix.abnz"     /* bool */
#define PMIX_DO_NOT_LAUNCH "pmix.dnl"            /* bool */
#define PMIX_SHOW_LAUNCH_PROGRESS "pmix.showprog" /* bool */
#define PMIX_AGGREGATE_HELP "pmix.agg.help"      /* bool */
#define PMIX_REPORT_CHILD_SEP "pmix.rptchildsep" /* bool */
#define PMIX_SPAWN_CHILD_SEP "pmix.spchildsep"   /* bool: the spawned job outlives its parent */
#define PMIX_QUERY_SUPPORTED_KEYS "pmix.qry.keys" /* char* */
#define PMIX_QUERY_NAMESPACES "pmix.qry.ns"      /* char* */
#define PMIX_QUERY_NAMESPACE_INFO "pmix.qry.nsinfo" /* pmix_data_array_t* */
#define PMIX_QUERY_JOB_STATUS "pmix.qry.jst"     /* pmix_status_t */
#define PMIX_QUERY_QUEUE_LIST "pmix.qry.qlst"    /* char* */
#define PMIX_QUERY_QUEUE_STATUS "pmix.qry.qst"   /* pmix_data_array_t* */
#define PMIX_QUERY_PROC_TABLE "pmix.qry.ptable"  /* pmix_data_array_t* */
#define PMIX_QUERY_LOCAL_PROC_TABLE "pmix.qry.lptable" /* pmix_data_array_t* */
#define PMIX_QUERY_AUTHORIZATIONS "pmix.qry.auths" /* pmix_data_array_t* */
#define PMIX_QUERY_SPAWN_SUPPORT "pmix.qry.spawn" /* char* */
#define PMIX_QUERY_DEBUG_SUPPORT "pmix.qry.debug" /* char* */
#define PMIX_QUERY_MEMORY_USAGE "pmix.qry.mem"   /* pmix_data_array_t* */
#define PMIX_QUERY_ALLOC_STATUS "pmix.query.alloc" /* char* */
#define PMIX_TIME_REMAINING "pmix.time.remaining" /* uint32_t */
#define PMIX_QUERY_NUM_PSETS "pmix.qry.psetnum"  /* size_t */
#define PMIX_QUERY_PSET_NAMES "pmix.qry.psets"   /* char* */
#define PMIX_QUERY_PSET_MEMBERSHIP "pmix.qry.pmems" /* pmix_data_array_t* */
#define PMIX_QUERY_NUM_GROUPS "pmix.qry.pgrpnum" /* size_t */
#define PMIX_QUERY_GROUP_NAMES "pmix.qry.pgrp"   /* pmix_data_array_t* */
#define PMIX_QUERY_GROUP_MEMBERSHIP "pmix.qry.pgrpmems" /* pmix_data_array_t* */
#define PMIX_QUERY_ATTRIBUTE_SUPPORT "pmix.qry.attrs" /* pmix_data_array_t* */
#define PMIX_CLIENT_FUNCTIONS "pmix.client.fns"  /* char* */
#define PMIX_SERVER_FUNCTIONS "pmix.srvr.fns"    /* char* */
#define PMIX_TOOL_FUNCTIONS "pmix.tool.fns"      /* char* */
#define PMIX_HOST_FUNCTIONS "pmix.host.fns"      /* char* */
#define PMIX_QUERY_AVAIL_SERVERS "pmix.qry.asrvrs" /* pmix_data_array_t* */
#define PMIX_QUERY_QUALIFIERS "pmix.qry.quals"   /* pmix_data_array_t* */
#define PMIX_QUERY_RESULTS "pmix.qry.res"        /* pmix_data_array_t* */
#define PMIX_QUERY_REFRESH_CACHE "pmix.qry.rfsh" /* bool */
#define PMIX_QUERY_LOCAL_ONLY "pmix.qry.local"   /* bool */
#define PMIX_QUERY_REPORT_AVG "pmix.qry.avg"     /* bool */
#define PMIX_QUERY_REPORT_MINMAX "pmix.qry.minmax" /* bool */
#define PMIX_CLIENT_ATTRIBUTES "pmix.client.attrs" /* char* */
#define PMIX_SERVER_ATTRIBUTES "pmix.srvr.attrs" /* char* */
#define PMIX_HOST_ATTRIBUTES "pmix.host.attrs"   /* char* */
#define PMIX_TOOL_ATTRIBUTES "pmix.tool.attrs"   /* char* */
#define PMIX_QUERY_SUPPORTED_QUALIFIERS "pmix.qry.quals" /* bool */
#define PMIX_SESSION_INFO "pmix.ssn.info"        /* bool */
#define PMIX_JOB_INFO "pmix.job.info"            /* bool */
#define PMIX_APP_INFO "pmix.app.info"            /* bool */
#define PMIX_NODE_INFO "pmix.node.info"          /* bool */
#define PMIX_SESSION_INFO_ARRAY "pmix.ssn.arr"   /* pmix_data_array_t* */
#define PMIX_JOB_INFO_ARRAY "pmix.job.arr"       /* pmix_data_array_t* */
#define PMIX_APP_INFO_ARRAY "pmix.app.arr"       /* pmix_data_array_t* */
#define PMIX_PROC_INFO_ARRAY "pmix.pdata"        /* pmix_data_array_t* */
#define PMIX_NODE_INFO_ARRAY "pmix.node.arr"     /* pmix_data_array_t* */
#define PMIX_SERVER_INFO_ARRAY "pmix.srv.arr"    /* pmix_data_array_t* */
#define PMIX_LOG_SOURCE "pmix.log.source"        /* pmix_proc_t* */
#define PMIX_LOG_STDERR "pmix.log.stderr"        /* char* */
#define PMIX_LOG_STDOUT "pmix.log.stdout"        /* char* */
#define PMIX_LOG_SYSLOG "pmix.log.syslog"        /* char* */
#define PMIX_LOG_LOCAL_SYSLOG "pmix.log.lsys"    /* char* */
#define PMIX_LOG_GLOBAL_SYSLOG "pmix.log.gsys"   /* char* */
#define PMIX_LOG_SYSLOG_PRI "pmix.log.syspri"    /* int */
#define PMIX_LOG_TIMESTAMP "pmix.log.tstmp"      /* time_t */
#define PMIX_LOG_GENERATE_TIMESTAMP "pmix.log.gtstmp" /* bool */
#define PMIX_LOG_TAG_OUTPUT "pmix.log.tag"       /* bool */
#define PMIX_LOG_TIMESTAMP_OUTPUT "pmix.log.tsout" /* bool */
#define PMIX_LOG_XML_OUTPUT "pmix.log.xml"       /* bool */
#define PMIX_LOG_ONCE "pmix.log.once"            /* bool */
#define PMIX_LOG_MSG "pmix.log.msg"              /* pmix_byte_object_t */
#define PMIX_LOG_KEY "pmix.log.key"              /* char* */
#define PMIX_LOG_VAL "pmix.log.val"              /* char* */
#define PMIX_LOG_AGG "pmix.log.agg"              /* bool */
#define PMIX_LOG_EMAIL "pmix.log.email"          /* pmix_data_array_t* */
#define PMIX_LOG_EMAIL_ADDR "pmix.log.emaddr"    /* char* */
#define PMIX_LOG_EMAIL_SENDER_ADDR "pmix.log.emfaddr" /* char* */
#define PMIX_LOG_EMAIL_SUBJECT "pmix.log.emsub"  /* char* */
#define PMIX_LOG_EMAIL_MSG "pmix.log.emmsg"      /* char* */
#define PMIX_LOG_EMAIL_SERVER "pmix.log.esrvr"   /* char* */
#define PMIX_LOG_EMAIL_SRVR_PORT "pmix.log.esrvrprt" /* int32_t */
#define PMIX_LOG_GLOBAL_DATASTORE "pmix.log.gstore" /* bool */
#define PMIX_LOG_JOB_RECORD "pmix.log.jrec"      /* bool */
#define PMIX_LOG_PROC_TERMINATION "pmix.logproc" /* bool */
#define PMIX_LOG_PROC_ABNORMAL_TERMINATION "pmix.logabproc" /* bool */
#define PMIX_LOG_JOB_EVENTS "pmix.log.jev"       /* bool */
#define PMIX_LOG_COMPLETION "pmix.logcomp"       /* bool */
#define PMIX_DEBUG_STOP_ON_EXEC "pmix.dbg.exec"  /* varies */
#define PMIX_DEBUG_STOP_IN_INIT "pmix.dbg.init"  /* varies */
#define PMIX_DEBUG_STOP_IN_APP "pmix.dbg.notify" /* varies */
#define PMIX_BREAKPOINT "pmix.brkpnt"            /* char* */
#define PMIX_DEBUG_TARGET "pmix.dbg.tgt"         /* pmix_proc_t* */
#define PMIX_DEBUG_DAEMONS_PER_PROC "pmix.dbg.dpproc" /* uint16_t */
#define PMIX_DEBUG_DAEMONS_PER_NODE "pmix.dbg.dpnd" /* uint16_t */
#define PMIX_RM_NAME "pmix.rm.name"              /* char* */
#define PMIX_RM_VERSION "pmix.rm.version"        /* char* */
#define PMIX_SET_ENVAR "pmix.envar.set"          /* pmix_envar_t* */
#define PMIX_ADD_ENVAR "pmix.envar.add"          /* pmix_envar_t* */
#define PMIX_UNSET_ENVAR "pmix.envar.unset"      /* char* */
#define PMIX_PREPEND_ENVAR "pmix.envar.prepnd"   /* pmix_envar_t* */
#define PMIX_APPEND_ENVAR "pmix.envar.appnd"     /* pmix_envar_t* */
#define PMIX_FIRST_ENVAR "pmix.envar.first"      /* pmix_envar_t* */
#define PMIX_ALLOC_REQ_ID "pmix.alloc.reqid"     /* char* */
#define PMIX_ALLOC_ID "pmix.alloc.id"            /* char* */
#define PMIX_ALLOC_NUM_NODES "pmix.alloc.nnodes" /* uint64_t */
#define PMIX_ALLOC_NODE_LIST "pmix.alloc.nlist"  /* char* */
#define PMIX_ALLOC_NUM_CPUS "pmix.alloc.ncpus"   /* uint64_t */
#define PMIX_ALLOC_NUM_CPU_LIST "pmix.alloc.ncpulist" /* char* */
#define PMIX_ALLOC_CPU_LIST "pmix.alloc.cpulist" /* char* */
#define PMIX_ALLOC_MEM_SIZE "pmix.alloc.msize"   /* float */
#define PMIX_ALLOC_FABRIC "pmix.alloc.net"       /* pmix_data_array_t* */
#define PMIX_ALLOC_FABRIC_ID "pmix.alloc.netid"  /* char* */
#define PMIX_ALLOC_BANDWIDTH "pmix.alloc.bw"     /* float */
#define PMIX_ALLOC_FABRIC_QOS "pmix.alloc.netqos" /* char* */
#define PMIX_ALLOC_TIME "pmix.alloc.time"        /* uint32_t */
#define PMIX_ALLOC_FABRIC_TYPE "pmix.alloc.nettype" /* char* */
#define PMIX_ALLOC_FABRIC_PLANE "pmix.alloc.netplane" /* char* */
#define PMIX_ALLOC_FABRIC_ENDPTS "pmix.alloc.endpts" /* size_t */
#define PMIX_ALLOC_FABRIC_ENDPTS_NODE "pmix.alloc.endpts.nd" /* size_t */
#define PMIX_ALLOC_FABRIC_SEC_KEY "pmix.alloc.nsec" /* pmix_byte_object_t */
#define PMIX_ALLOC_QUEUE "pmix.alloc.queue"      /* char* */
#define PMIX_JOB_CTRL_ID "pmix.jctrl.id"         /* char* */
#define PMIX_JOB_CTRL_PAUSE "pmix.jctrl.pause"   /* bool */
#define PMIX_JOB_CTRL_RESUME "pmix.jctrl.resume" /* bool */
#define PMIX_JOB_CTRL_CANCEL "pmix.jctrl.cancel" /* char* */
#define PMIX_JOB_CTRL_KILL "pmix.jctrl.kill"     /* bool */
#define PMIX_JOB_CTRL_RESTART "pmix.jctrl.restart" /* char* */
#define PMIX_JOB_CTRL_CHECKPOINT "pmix.jctrl.ckpt" /* char* */
#define PMIX_JOB_CTRL_CHECKPOINT_EVENT "pmix.jctrl.ckptev" /* bool */
#define PMIX_JOB_CTRL_CHECKPOINT_SIGNAL "pmix.jctrl.ckptsig" /* int */
#define PMIX_JOB_CTRL_CHECKPOINT_TIMEOUT "pmix.jctrl.ckptsig" /* int */
#define PMIX_JOB_CTRL_CHECKPOINT_METHOD "pmix.jctrl.ckmethod" /* pmix_data_array_t* */
#define PMIX_JOB_CTRL_SIGNAL "pmix.jctrl.sig"    /* int */
#define PMIX_JOB_CTRL_PROVISION "pmix.jctrl.pvn" /* char* */
#define PMIX_JOB_CTRL_PROVISION_IMAGE "pmix.jctrl.pvnimg" /* char* */
#define PMIX_JOB_CTRL_PREEMPTIBLE "pmix.jctrl.preempt" /* bool */
#define PMIX_JOB_CTRL_TERMINATE "pmix.jctrl.term" /* bool */
#define PMIX_REGISTER_CLEANUP "pmix.reg.cleanup" /* char* */
#define PMIX_REGISTER_CLEANUP_DIR "pmix.reg.cleanupdir" /* char* */
#define PMIX_CLEANUP_RECURSIVE "pmix.clnup.recurse" /* bool */
#define PMIX_CLEANUP_EMPTY "pmix.clnup.empty"    /* bool */
#define PMIX_CLEANUP_IGNORE "pmix.clnup.ignore"  /* char* */
#define PMIX_CLEANUP_LEAVE_TOPDIR "pmix.clnup.lvtop" /* bool */
#define PMIX_MONITOR_ID "pmix.monitor.id"        /* char* */
#define PMIX_MONITOR_CANCEL "pmix.monitor.cancel" /* char* */
#define PMIX_MONITOR_APP_CONTROL "pmix.monitor.appctrl" /* bool */
#define PMIX_MONITOR_HEARTBEAT "pmix.monitor.mbeat" /* bool */
#define PMIX_SEND_HEARTBEAT "pmix.monitor.beat"  /* bool */
#define PMIX_MONITOR_HEARTBEAT_TIME "pmix.monitor.btime" /* uint32_t */
#define PMIX_MONITOR_HEARTBEAT_DROPS "pmix.monitor.bdrop" /* uint32_t */
#define PMIX_MONITOR_FILE "pmix.monitor.fmon"    /* char* */
#define PMIX_MONITOR_FILE_SIZE "pmix.monitor.fsize" /* bool */
#define PMIX_MONITOR_FILE_ACCESS "pmix.monitor.faccess" /* char* */
#define PMIX_MONITOR_FILE_MODIFY "pmix.monitor.fmod" /* char* */
#define PMIX_MONITOR_FILE_CHECK_TIME "pmix.monitor.ftime" /* uint32_t */
#define PMIX_MONITOR_FILE_DROPS "pmix.monitor.fdrop" /* uint32_t */
#define PMIX_CRED_TYPE "pmix.sec.ctype"          /* char* */
#define PMIX_CRYPTO_KEY "pmix.sec.key"           /* pmix_byte_object_t */
#define PMIX_IOF_CACHE_SIZE "pmix.iof.csize"     /* uint32_t */
#define PMIX_IOF_DROP_OLDEST "pmix.iof.old"      /* bool */
#define PMIX_IOF_DROP_NEWEST "pmix.iof.new"      /* bool */
#define PMIX_IOF_BUFFERING_SIZE "pmix.iof.bsize" /* uint32_t */
#define PMIX_IOF_BUFFERING_TIME "pmix.iof.btime" /* uint32_t */
#define PMIX_IOF_COMPLETE "pmix.iof.cmp"         /* bool */
#define PMIX_IOF_PUSH_STDIN "pmix.iof.stdin"     /* bool */
#define PMIX_IOF_TAG_OUTPUT "pmix.iof.tag"       /* bool */
#define PMIX_IOF_TAG_DETAILED_OUTPUT "pmix.iof.tagdet" /* bool */
#define PMIX_IOF_TAG_FULLNAME_OUTPUT "pmix.iof.tagfull" /* bool */
#define PMIX_IOF_RANK_OUTPUT "pmix.iof.rank"     /* bool */
#define PMIX_IOF_TIMESTAMP_OUTPUT "pmix.iof.ts"  /* bool */
#define PMIX_IOF_MERGE_STDERR_STDOUT "pmix.iof.mrg" /* bool */
#define PMIX_IOF_XML_OUTPUT "pmix.iof.xml"       /* bool */
#define PMIX_IOF_OUTPUT_TO_FILE "pmix.iof.file"  /* char* */
#define PMIX_IOF_FILE_PATTERN "pmix.iof.fpt"     /* bool */
#define PMIX_IOF_OUTPUT_TO_DIRECTORY "pmix.iof.dir" /* char* */
#define PMIX_IOF_FILE_ONLY "pmix.iof.fonly"      /* bool */
#define PMIX_IOF_COPY "pmix.iof.cpy"             /* bool */
#define PMIX_IOF_REDIRECT "pmix.iof.redir"       /* bool */
#define PMIX_IOF_LOCAL_OUTPUT "pmix.iof.local"   /* bool */
#define PMIX_IOF_OUTPUT_RAW "pmix.iof.raw"       /* bool */
#define PMIX_SETUP_APP_ENVARS "pmix.setup.env"   /* bool */
#define PMIX_SETUP_APP_NONENVARS "pmix.setup.nenv" /* bool */
#define PMIX_SETUP_APP_ALL "pmix.setup.all"      /* bool */
#define PMIX_GROUP_ID "pmix.grp.id"              /* char* */
#define PMIX_GROUP_LEADER "pmix.grp.ldr"         /* bool */
#define PMIX_GROUP_OPTIONAL "pmix.grp.opt"       /* bool */
#define PMIX_GROUP_NOTIFY_TERMINATION "pmix.grp.notterm" /* bool */
#define PMIX_GROUP_FT_COLLECTIVE "pmix.grp.ftcoll" /* bool */
#define PMIX_GROUP_MEMBERSHIP "pmix.grp.mbrs"    /* pmix_data_array_t* */
#define PMIX_GROUP_ASSIGN_CONTEXT_ID "pmix.grp.actxid" /* bool */
#define PMIX_GROUP_CONTEXT_ID "pmix.grp.ctxid"   /* size_t */
#define PMIX_GROUP_LOCAL_ONLY "pmix.grp.lcl"     /* bool */
#define PMIX_GROUP_ENDPT_DATA "pmix.grp.endpt"   /* pmix_byte_object_t */
#define PMIX_GROUP_NAMES "pmix.pgrp.nm"          /* pmix_data_array_t* */
#define PMIX_GROUP_INFO "pmix.grp.info"          /* pmix_data_array_t* */
#define PMIX_GROUP_LOCAL_CID "pmix.grp.lclid"    /* size_t */
#define PMIX_GROUP_ADD_MEMBERS "pmix.grp.add"    /* pmix_data_array_t* */
#define PMIX_QUERY_STORAGE_LIST "pmix.strg.list" /* char* */
#define PMIX_STORAGE_CAPACITY_LIMIT "pmix.strg.cap" /* uint64_t */
#define PMIX_STORAGE_OBJECT_LIMIT "pmix.strg.obj" /* uint64_t */
#define PMIX_STORAGE_ID "pmix.strg.id"           /* char* */
#define PMIX_STORAGE_PATH "pmix.strg.path"       /* char* */
#define PMIX_STORAGE_TYPE "pmix.strg.type"       /* char* */
#define PMIX_STORAGE_ACCESSIBILITY "pmix.strg.access" /* pmix_storage_accessibility_t */
#define PMIX_STORAGE_ACCESS_TYPE "pmix.strg.atype" /* pmix_storage_access_type_t */
#define PMIX_STORAGE_BW_CUR "pmix.strg.bwcur"    /* double */
#define PMIX_STORAGE_BW_MAX "pmix.strg.bwmax"    /* double */
#define PMIX_STORAGE_CAPACITY_USED "pmix.strg.capuse" /* double */
#define PMIX_STORAGE_IOPS_CUR "pmix.strg.iopscur" /* double */
#define PMIX_STORAGE_IOPS_MAX "pmix.strg.iopsmax" /* double */
#define PMIX_STORAGE_MEDIUM "pmix.strg.medium"   /* pmix_storage_medium_t */
#define PMIX_STORAGE_MINIMAL_XFER_SIZE "pmix.strg.minxfer" /* double */
#define PMIX_STORAGE_OBJECTS_USED "pmix.strg.objuse" /* uint64_t */
#define PMIX_STORAGE_PERSISTENCE "pmix.strg.persist" /* pmix_storage_persistence_t */
#define PMIX_STORAGE_SUGGESTED_XFER_SIZE "pmix.strg.sxfer" /* double */
#define PMIX_STORAGE_VERSION "pmix.strg.ver"     /* char* */
#define PMIX_FABRIC_COST_MATRIX "pmix.fab.cm"    /* pointer */
#define PMIX_FABRIC_GROUPS "pmix.fab.grps"       /* char* */
#define PMIX_FABRIC_VENDOR "pmix.fab.vndr"       /* char* */
#define PMIX_FABRIC_IDENTIFIER "pmix.fab.id"     /* char* */
#define PMIX_FABRIC_INDEX "pmix.fab.idx"         /* size_t */
#define PMIX_FABRIC_COORDINATES "pmix.fab.coord" /* pmix_data_array_t* */
#define PMIX_FABRIC_DEVICE_VENDORID "pmix.fabdev.vendid" /* char* */
#define PMIX_FABRIC_NUM_DEVICES "pmix.fab.nverts" /* size_t */
#define PMIX_FABRIC_DIMS "pmix.fab.dims"         /* uint32_t */
#define PMIX_FABRIC_PLANE "pmix.fab.plane"       /* char* */
#define PMIX_FABRIC_SWITCH "pmix.fab.switch"     /* char* */
#define PMIX_FABRIC_ENDPT "pmix.fab.endpt"       /* pmix_data_array_t* */
#define PMIX_FABRIC_SHAPE "pmix.fab.shape"       /* pmix_data_array_t* */
#define PMIX_FABRIC_SHAPE_STRING "pmix.fab.shapestr" /* char* */
#define PMIX_SWITCH_PEERS "pmix.speers"          /* char* */
#define PMIX_FABRIC_DEVICE "pmix.fabdev"         /* pmix_data_array_t* */
#define PMIX_FABRIC_DEVICES "pmix.fab.devs"      /* pmix_data_array_t* */
#define PMIX_FABRIC_DEVICE_NAME "pmix.fabdev.nm" /* char* */
#define PMIX_FABRIC_DEVICE_INDEX "pmix.fabdev.idx" /* uint32_t */
#define PMIX_FABRIC_DEVICE_VENDOR "pmix.fabdev.vndr" /* char* */
#define PMIX_FABRIC_DEVICE_BUS_TYPE "pmix.fabdev.btyp" /* char* */
#define PMIX_FABRIC_DEVICE_DRIVER "pmix.fabdev.driver" /* char* */
#define PMIX_FABRIC_DEVICE_FIRMWARE "pmix.fabdev.fmwr" /* char* */
#define PMIX_FABRIC_DEVICE_ADDRESS "pmix.fabdev.addr" /* char* */
#define PMIX_FABRIC_DEVICE_COORDINATES "pmix.fab.coord" /* pmix_geometry_t */
#define PMIX_FABRIC_DEVICE_MTU "pmix.fabdev.mtu" /* size_t */
#define PMIX_FABRIC_DEVICE_SPEED "pmix.fabdev.speed" /* size_t */
#define PMIX_FABRIC_DEVICE_STATE "pmix.fabdev.state" /* pmix_link_state_t */
#define PMIX_FABRIC_DEVICE_TYPE "pmix.fabdev.type" /* char* */
#define PMIX_FABRIC_DEVICE_PCI_DEVID "pmix.fabdev.pcidevid" /* char* */
#define PMIX_DEVICE_DISTANCES "pmix.dev.dist"    /* pmix_data_array_t* */
#define PMIX_DEVICE_TYPE "pmix.dev.type"         /* pmix_device_type_t */
#define PMIX_DEVICE_ID "pmix.dev.id"             /* char* */
#define PMIX_MAX_VALUE "pmix.descr.maxval"       /* varies */
#define PMIX_MIN_VALUE "pmix.descr.minval"       /* varies */
#define PMIX_ENUM_VALUE "pmix.descr.enum"        /* char* */
#define PMIX_QUERY_STABLE_ABI_VERSION "pmix.qry.stabiver" /* char* */
#define PMIX_QUERY_PROVISIONAL_ABI_VERSION "pmix.qry.prabiver" /* char* */
#define PMIX_PROC_STATE_UNDEF 0
#define PMIX_PROC_STATE_PREPPED 1
#define PMIX_PROC_STATE_LAUNCH_UNDERWAY 2
#define PMIX_PROC_STATE_RESTART 3
#define PMIX_PROC_STATE_TERMINATE 4
#define PMIX_PROC_STATE_RUNNING 5
#define PMIX_PROC_STATE_CONNECTED 6
#define PMIX_PROC_STATE_UNTERMINATED 15
#define PMIX_PROC_STATE_TERMINATED 20
#define PMIX_PROC_STATE_ERROR 50
#define PMIX_PROC_STATE_KILLED_BY_CMD (PMIX_PROC_STATE_ERROR +  1)
#define PMIX_PROC_STATE_ABORTED (PMIX_PROC_STATE_ERROR +  2)
#define PMIX_PROC_STATE_FAILED_TO_START (PMIX_PROC_STATE_ERROR +  3)
#define PMIX_PROC_STATE_ABORTED_BY_SIG (PMIX_PROC_STATE_ERROR +  4)
#define PMIX_PROC_STATE_TERM_WO_SYNC (PMIX_PROC_STATE_ERROR +  5)
#define PMIX_PROC_STATE_COMM_FAILED (PMIX_PROC_STATE_ERROR +  6)
#define PMIX_PROC_STATE_SENSOR_BOUND_EXCEEDED (PMIX_PROC_STATE_ERROR +  7)
#define PMIX_PROC_STATE_CALLED_ABORT (PMIX_PROC_STATE_ERROR +  8)
#define PMIX_PROC_STATE_HEARTBEAT_FAILED (PMIX_PROC_STATE_ERROR +  9)
#define PMIX_PROC_STATE_MIGRATING (PMIX_PROC_STATE_ERROR + 10)
#define PMIX_PROC_STATE_CANNOT_RESTART (PMIX_PROC_STATE_ERROR + 11)
#define PMIX_PROC_STATE_TERM_NON_ZERO (PMIX_PROC_STATE_ERROR + 12)
#define PMIX_PROC_STATE_FAILED_TO_LAUNCH (PMIX_PROC_STATE_ERROR + 13)
#define PMIX_JOB_STATE_UNDEF 0
#define PMIX_JOB_STATE_AWAITING_ALLOC 1
#define PMIX_JOB_STATE_LAUNCH_UNDERWAY 2
#define PMIX_JOB_STATE_RUNNING 3
#define PMIX_JOB_STATE_SUSPENDED 4
#define PMIX_JOB_STATE_CONNECTED 5
#define PMIX_JOB_STATE_UNTERMINATED 15
#define PMIX_JOB_STATE_TERMINATED 20
#define PMIX_JOB_STATE_TERMINATED_WITH_ERROR 50
#define PMIX_SUCCESS 0
#define PMIX_ERROR (-1)
#define PMIX_ERR_PROC_RESTART (-4)
#define PMIX_ERR_PROC_CHECKPOINT (-5)
#define PMIX_ERR_PROC_MIGRATE (-6)
#define PMIX_ERR_EXISTS (-11)
#define PMIX_ERR_INVALID_CRED (-12)
#define PMIX_ERR_WOULD_BLOCK (-15)
#define PMIX_ERR_UNKNOWN_DATA_TYPE (-16)
#define PMIX_ERR_TYPE_MISMATCH (-18)
#define PMIX_ERR_UNPACK_INADEQUATE_SPACE (-19)
#define PMIX_ERR_UNPACK_FAILURE (-20)
#define PMIX_ERR_PACK_FAILURE (-21)
#define PMIX_ERR_NO_PERMISSIONS (-23)
#define PMIX_ERR_TIMEOUT (-24)
#define PMIX_ERR_UNREACH (-25)
#define PMIX_ERR_BAD_PARAM (-27)
#define PMIX_ERR_RESOURCE_BUSY (-28)
#define PMIX_ERR_OUT_OF_RESOURCE (-29)
#define PMIX_ERR_INIT (-31)
#define PMIX_ERR_NOMEM (-32)
#define PMIX_ERR_NOT_FOUND (-46)
#define PMIX_ERR_NOT_SUPPORTED (-47)
#define PMIX_ERR_PARAM_VALUE_NOT_SUPPORTED (-59)
#define PMIX_ERR_COMM_FAILURE (-49)
#define PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER (-50)
#define PMIX_ERR_CONFLICTING_CLEANUP_DIRECTIVES (-51)
#define PMIX_ERR_PARTIAL_SUCCESS (-52)
#define PMIX_ERR_DUPLICATE_KEY (-53)
#define PMIX_ERR_EMPTY (-60)
#define PMIX_ERR_LOST_CONNECTION (-61)
#define PMIX_ERR_EXISTS_OUTSIDE_SCOPE (-62)
#define PMIX_PROCESS_SET_DEFINE (-55)
#define PMIX_PROCESS_SET_DELETE (-56)
#define PMIX_DEBUGGER_RELEASE (-3)
#define PMIX_READY_FOR_DEBUG (-58)
#define PMIX_QUERY_PARTIAL_SUCCESS (-104)
#define PMIX_JCTRL_CHECKPOINT (-106)
#define PMIX_JCTRL_CHECKPOINT_COMPLETE (-107)
#define PMIX_JCTRL_PREEMPT_ALERT (-108)
#define PMIX_MONITOR_HEARTBEAT_ALERT (-109)
#define PMIX_MONITOR_FILE_ALERT (-110)
#define PMIX_PROC_TERMINATED (-111)
#define PMIX_ERR_EVENT_REGISTRATION (-144)
#define PMIX_MODEL_DECLARED (-147)
#define PMIX_MODEL_RESOURCES (-151)
#define PMIX_OPENMP_PARALLEL_ENTERED (-152)
#define PMIX_OPENMP_PARALLEL_EXITED (-153)
#define PMIX_LAUNCHER_READY (-155)
#define PMIX_OPERATION_IN_PROGRESS (-156)
#define PMIX_OPERATION_SUCCEEDED (-157)
#define PMIX_ERR_INVALID_OPERATION (-158)
#define PMIX_GROUP_INVITED (-159)
#define PMIX_GROUP_LEFT (-160)
#define PMIX_GROUP_INVITE_ACCEPTED (-161)
#define PMIX_GROUP_INVITE_DECLINED (-162)
#define PMIX_GROUP_INVITE_FAILED (-163)
#define PMIX_GROUP_MEMBERSHIP_UPDATE (-164)
#define PMIX_GROUP_CONSTRUCT_ABORT (-165)
#define PMIX_GROUP_CONSTRUCT_COMPLETE (-166)
#define PMIX_GROUP_LEADER_SELECTED (-167)
#define PMIX_GROUP_LEADER_FAILED (-168)
#define PMIX_GROUP_CONTEXT_ID_ASSIGNED (-169)
#define PMIX_GROUP_MEMBER_FAILED (-170)
#define PMIX_ERR_REPEAT_ATTR_REGISTRATION (-171)
#define PMIX_ERR_IOF_FAILURE (-172)
#define PMIX_ERR_IOF_COMPLETE (-173)
#define PMIX_LAUNCH_COMPLETE (-174)
#define PMIX_FABRIC_UPDATED (-175)
#define PMIX_FABRIC_UPDATE_PENDING (-176)
#define PMIX_FABRIC_UPDATE_ENDPOINTS (-113)
#define PMIX_ERR_JOB_APP_NOT_EXECUTABLE (-177)
#define PMIX_ERR_JOB_NO_EXE_SPECIFIED (-178)
#define PMIX_ERR_JOB_FAILED_TO_MAP (-179)
#define PMIX_ERR_JOB_CANCELED (-180)
#define PMIX_ERR_JOB_FAILED_TO_LAUNCH (-181)
#define PMIX_ERR_JOB_ABORTED (-182)
#define PMIX_ERR_JOB_KILLED_BY_CMD (-183)
#define PMIX_ERR_JOB_ABORTED_BY_SIG (-184)
#define PMIX_ERR_JOB_TERM_WO_SYNC (-185)
#define PMIX_ERR_JOB_SENSOR_BOUND_EXCEEDED (-186)
#define PMIX_ERR_JOB_NON_ZERO_TERM (-187)
#define PMIX_ERR_JOB_ALLOC_FAILED (-188)
#define PMIX_ERR_JOB_ABORTED_BY_SYS_EVENT (-189)
#define PMIX_ERR_JOB_EXE_NOT_FOUND (-190)
#define PMIX_ERR_JOB_WDIR_NOT_FOUND (-233)
#define PMIX_ERR_JOB_INSUFFICIENT_RESOURCES (-234)
#define PMIX_ERR_JOB_SYS_OP_FAILED (-235)
#define PMIX_EVENT_JOB_START (-191)
#define PMIX_EVENT_JOB_END (-145)
#define PMIX_EVENT_SESSION_START (-192)
#define PMIX_EVENT_SESSION_END (-193)
#define PMIX_ERR_PROC_REQUESTED_ABORT (-8)
#define PMIX_ERR_PROC_TERM_WO_SYNC (-200)
#define PMIX_EVENT_PROC_TERMINATED (-201)
#define PMIX_ERR_PROC_KILLED_BY_CMD (-400)
#define PMIX_ERR_PROC_FAILED_TO_START (-401)
#define PMIX_ERR_PROC_ABORTED_BY_SIG (-402)
#define PMIX_ERR_PROC_SENSOR_BOUND_EXCEEDED (-403)
#define PMIX_ERR_EXIT_NONZERO_TERM (-404)
#define PMIX_EVENT_SYS_BASE (-230)
#define PMIX_EVENT_NODE_DOWN (-231)
#define PMIX_EVENT_NODE_OFFLINE (-232)
#define PMIX_EVENT_SYS_OTHER (-330)
#define PMIX_EVENT_NO_ACTION_TAKEN (-331)
#define PMIX_EVENT_PARTIAL_ACTION_TAKEN (-332)
#define PMIX_EVENT_ACTION_DEFERRED (-333)
#define PMIX_EVENT_ACTION_COMPLETE (-334)
#define PMIX_EXTERNAL_ERR_BASE (-3000)
#define PMIX_UNDEF 0
#define PMIX_BOOL 1
#define PMIX_BYTE 2
#define PMIX_STRING 3
#define PMIX_SIZE 4
#define PMIX_PID 5
#define PMIX_INT 6
#define PMIX_INT8 7
#define PMIX_INT16 8
#define PMIX_INT32 9
#define PMIX_INT64 10
#define PMIX_UINT 11
#define PMIX_UINT8 12
#define PMIX_UINT16 13
#define PMIX_UINT32 14
#define PMIX_UINT64 15
#define PMIX_FLOAT 16
#define PMIX_DOUBLE 17
#define PMIX_TIMEVAL 18
#define PMIX_TIME 19
#define PMIX_STATUS 20
#define PMIX_VALUE 21
#define PMIX_PROC 22
#define PMIX_APP 23
#define PMIX_INFO 24
#define PMIX_PDATA 25
#define PMIX_BYTE_OBJECT 27
#define PMIX_KVAL 28
#define PMIX_PERSIST 30
#define PMIX_POINTER 31
#define PMIX_SCOPE 32
#define PMIX_DATA_RANGE 33
#define PMIX_COMMAND 34
#define PMIX_INFO_DIRECTIVES 35
#define PMIX_DATA_TYPE 36
#define PMIX_PROC_STATE 37
#define PMIX_PROC_INFO 38
#define PMIX_DATA_ARRAY 39
#define PMIX_PROC_RANK 40
#define PMIX_QUERY 41
#define PMIX_COMPRESSED_STRING 42
#define PMIX_ALLOC_DIRECTIVE 43
#define PMIX_IOF_CHANNEL 45
#define PMIX_ENVAR 46
#define PMIX_COORD 47
#define PMIX_REGATTR 48
#define PMIX_REGEX 49
#define PMIX_JOB_STATE 50
#define PMIX_LINK_STATE 51
#define PMIX_PROC_CPUSET 52
#define PMIX_GEOMETRY 53
#define PMIX_DEVICE_DIST 54
#define PMIX_ENDPOINT 55
#define PMIX_TOPO 56
#define PMIX_DEVTYPE 57
#define PMIX_LOCTYPE 58
#define PMIX_COMPRESSED_BYTE_OBJECT 59
#define PMIX_PROC_NSPACE 60
#define PMIX_PROC_STATS 61
#define PMIX_DISK_STATS 62
#define PMIX_NET_STATS 63
#define PMIX_NODE_STATS 64
#define PMIX_DATA_BUFFER 65
#define PMIX_STOR_MEDIUM 66
#define PMIX_STOR_ACCESS 67
#define PMIX_STOR_PERSIST 68
#define PMIX_STOR_ACCESS_TYPE 69
#define PMIX_DATA_TYPE_MAX 500
#define PMIX_SCOPE_UNDEF 0
#define PMIX_LOCAL 1
#define PMIX_REMOTE 2
#define PMIX_GLOBAL 3
#define PMIX_INTERNAL 4
#define PMIX_RANGE_UNDEF 0
#define PMIX_RANGE_RM 1
#define PMIX_RANGE_LOCAL 2
#define PMIX_RANGE_NAMESPACE 3
#define PMIX_RANGE_SESSION 4
#define PMIX_RANGE_GLOBAL 5
#define PMIX_RANGE_CUSTOM 6
#define PMIX_RANGE_PROC_LOCAL 7
#define PMIX_RANGE_INVALID UINT8_MAX
#define PMIX_PERSIST_INDEF 0
#define PMIX_PERSIST_FIRST_READ 1
#define PMIX_PERSIST_PROC 2
#define PMIX_PERSIST_APP 3
#define PMIX_PERSIST_SESSION 4
#define PMIX_PERSIST_INVALID UINT8_MAX
#define PMIX_INFO_REQD 0x00000001
#define PMIX_INFO_ARRAY_END 0x00000002
#define PMIX_INFO_REQD_PROCESSED 0x00000004
#define PMIX_INFO_QUALIFIER 0x00000008
#define PMIX_INFO_PERSISTENT 0x00000010
#define PMIX_INFO_DIR_RESERVED 0xffff0000
#define PMIX_ALLOC_NEW 1
#define PMIX_ALLOC_EXTEND 2
#define PMIX_ALLOC_RELEASE 3
#define PMIX_ALLOC_REAQUIRE 4
#define PMIX_ALLOC_EXTERNAL 128
#define PMIX_FWD_NO_CHANNELS 0x0000
#define PMIX_FWD_STDIN_CHANNEL 0x0001
#define PMIX_FWD_STDOUT_CHANNEL 0x0002
#define PMIX_FWD_STDERR_CHANNEL 0x0004
#define PMIX_FWD_STDDIAG_CHANNEL 0x0008
#define PMIX_FWD_ALL_CHANNELS 0x00ff
#define PMIX_STORAGE_MEDIUM_UNKNOWN 0x0000000000000001
#define PMIX_STORAGE_MEDIUM_TAPE 0x0000000000000002
#define PMIX_STORAGE_MEDIUM_HDD 0x0000000000000004
#define PMIX_STORAGE_MEDIUM_SSD 0x0000000000000008
#define PMIX_STORAGE_MEDIUM_NVME 0x0000000000000010
#define PMIX_STORAGE_MEDIUM_PMEM 0x0000000000000020
#define PMIX_STORAGE_MEDIUM_RAM 0x0000000000000040
#define PMIX_STORAGE_ACCESSIBILITY_NODE 0x0000000000000001
#define PMIX_STORAGE_ACCESSIBILITY_SESSION 0x0000000000000002
#define PMIX_STORAGE_ACCESSIBILITY_JOB 0x0000000000000004
#define PMIX_STORAGE_ACCESSIBILITY_RACK 0x0000000000000008
#define PMIX_STORAGE_ACCESSIBILITY_CLUSTER 0x0000000000000010
#define PMIX_STORAGE_ACCESSIBILITY_REMOTE 0x0000000000000020
#define PMIX_STORAGE_PERSISTENCE_TEMPORARY 0x0000000000000001
#define PMIX_STORAGE_PERSISTENCE_NODE 0x0000000000000002
#define PMIX_STORAGE_PERSISTENCE_SESSION 0x0000000000000004
#define PMIX_STORAGE_PERSISTENCE_JOB 0x0000000000000008
#define PMIX_STORAGE_PERSISTENCE_SCRATCH 0x0000000000000010
#define PMIX_STORAGE_PERSISTENCE_PROJECT 0x0000000000000020
#define PMIX_STORAGE_PERSISTENCE_ARCHIVE 0x0000000000000040
#define PMIX_STORAGE_ACCESS_RD 0x0001
#define PMIX_STORAGE_ACCESS_WR 0x0002
#define PMIX_STORAGE_ACCESS_RDWR 0x0003
#define PMIX_COORD_VIEW_UNDEF 0x00
#define PMIX_COORD_LOGICAL_VIEW 0x01
#define PMIX_COORD_PHYSICAL_VIEW 0x02
#define PMIX_LINK_STATE_UNKNOWN 0
#define PMIX_LINK_DOWN 1
#define PMIX_LINK_UP 2
#define PMIX_CPUBIND_PROCESS 0
#define PMIX_CPUBIND_THREAD 1
#define PMIX_LOCALITY_UNKNOWN 0x0000
#define PMIX_LOCALITY_NONLOCAL 0x8000
#define PMIX_LOCALITY_SHARE_HWTHREAD 0x0001
#define PMIX_LOCALITY_SHARE_CORE 0x0002
#define PMIX_LOCALITY_SHARE_L1CACHE 0x0004
#define PMIX_LOCALITY_SHARE_L2CACHE 0x0008
#define PMIX_LOCALITY_SHARE_L3CACHE 0x0010
#define PMIX_LOCALITY_SHARE_PACKAGE 0x0020
#define PMIX_LOCALITY_SHARE_NUMA 0x0040
#define PMIX_LOCALITY_SHARE_NODE 0x4000
#define PMIX_DEVTYPE_UNKNOWN 0x00
#define PMIX_DEVTYPE_BLOCK 0x01
#define PMIX_DEVTYPE_GPU 0x02
#define PMIX_DEVTYPE_NETWORK 0x04
#define PMIX_DEVTYPE_OPENFABRICS 0x08
#define PMIX_DEVTYPE_DMA 0x10
#define PMIX_DEVTYPE_COPROC 0x20

/****  BASIC TYPES  ****/
typedef int pmix_status_t;
typedef uint32_t pmix_rank_t;
typedef uint16_t pmix_data_type_t;
typedef uint8_t pmix_data_range_t;
typedef uint8_t pmix_scope_t;
typedef uint8_t pmix_persistence_t;
typedef uint32_t pmix_info_directives_t;
typedef uint8_t pmix_alloc_directive_t;
typedef uint16_t pmix_iof_channel_t;
typedef uint8_t pmix_proc_state_t;
typedef uint8_t pmix_job_state_t;
typedef uint8_t pmix_coord_view_t;
typedef uint8_t pmix_link_state_t;
typedef uint8_t pmix_bind_envelope_t;
typedef uint16_t pmix_locality_t;
typedef uint64_t pmix_device_type_t;
typedef uint64_t pmix_storage_medium_t;
typedef uint64_t pmix_storage_accessibility_t;
typedef uint64_t pmix_storage_persistence_t;
typedef uint16_t pmix_storage_access_type_t;
typedef char pmix_nspace_t[PMIX_MAX_NSLEN + 1];
typedef char pmix_key_t[PMIX_MAX_KEYLEN + 1];

/****  ENUMS  ****/
typedef enum {
    PMIX_EQUAL = 0,
    PMIX_VALUE1_GREATER = 1,
    PMIX_VALUE2_GREATER = 2,
    PMIX_VALUE_TYPE_DIFFERENT = 3,
    PMIX_VALUE_INCOMPATIBLE_OBJECTS = 4,
    PMIX_VALUE_COMPARISON_NOT_AVAIL = 5
} pmix_value_cmp_t;

typedef enum { PMIX_GROUP_DECLINE = 0, PMIX_GROUP_ACCEPT = 1 } pmix_group_opt_t;

typedef enum { PMIX_GROUP_CONSTRUCT = 0, PMIX_GROUP_DESTRUCT = 1 } pmix_group_operation_t;

typedef enum { PMIX_BOOL_TRUE = 0, PMIX_BOOL_FALSE = 1, PMIX_NON_BOOL = 2 } pmix_boolean_t;

typedef enum {
    PMIX_FABRIC_REQUEST_INFO = 0,
    PMIX_FABRIC_UPDATE_INFO = 1
} pmix_fabric_operation_t;

/****  STRUCTURES  ****/

/* a process identifier: namespace + rank */
typedef struct pmix_proc {
    pmix_nspace_t nspace;
    pmix_rank_t rank;
} pmix_proc_t;

/* an opaque blob of bytes, owned by the object */
typedef struct pmix_byte_object {
    char *bytes;
    size_t size;
} pmix_byte_object_t;

/* an array of `size` elements of PMIx data type `type` */
typedef struct pmix_data_array {
    pmix_data_type_t type;
    size_t size;
    void *array;
} pmix_data_array_t;

/* an environment variable directive */
typedef struct pmix_envar {
    char *envar;
    char *value;
    char separator;
} pmix_envar_t;

/* coordinates of a process/device in a fabric */
typedef struct pmix_coord {
    pmix_coord_view_t view;
    uint32_t *coord;
    size_t dims;
} pmix_coord_t;

/* a CPU set: `source` names the library that produced the opaque `bitmap` ("hwloc") */
typedef struct pmix_cpuset {
    char *source;
    void *bitmap;
} pmix_cpuset_t;

/* a topology: `source` names the library behind the opaque `topology` ("hwloc") */
typedef struct pmix_topology {
    char *source;
    void *topology;
} pmix_topology_t;

/* the fabric geometry of a device */
typedef struct pmix_geometry {
    size_t fabric;
    char *uuid;
    char *osname;
    pmix_coord_t *coordinates;
    size_t ncoords;
} pmix_geometry_t;

/* the distance from a process to a device */
typedef struct pmix_device_distance {
    char *uuid;
    char *osname;
    pmix_device_type_t type;
    uint16_t mindist;
    uint16_t maxdist;
} pmix_device_distance_t;

/* a fabric endpoint of a device */
typedef struct pmix_endpoint {
    char *uuid;
    char *osname;
    pmix_byte_object_t endpt;
} pmix_endpoint_t;

/* a buffer for PMIx_Data_pack/unpack */
typedef struct pmix_data_buffer {
    char *base_ptr;
    char *pack_ptr;
    char *unpack_ptr;
    size_t bytes_allocated;
    size_t bytes_used;
} pmix_data_buffer_t;

/* information about a process */
typedef struct pmix_proc_info {
    pmix_proc_t proc;
    char *hostname;
    char *executable_name;
    pid_t pid;
    int exit_code;
    pmix_proc_state_t state;
} pmix_proc_info_t;

/* statistics of a disk */
typedef struct pmix_disk_stats {
    char *disk;
    uint64_t num_reads_completed;
    uint64_t num_reads_merged;
    uint64_t num_sectors_read;
    uint64_t milliseconds_reading;
    uint64_t num_writes_completed;
    uint64_t num_writes_merged;
    uint64_t num_sectors_written;
    uint64_t milliseconds_writing;
    uint64_t num_ios_in_progress;
    uint64_t milliseconds_io;
    uint64_t weighted_milliseconds_io;
} pmix_disk_stats_t;

/* statistics of a network interface */
typedef struct pmix_net_stats {
    char *net_interface;
    uint64_t num_bytes_recvd;
    uint64_t num_packets_recvd;
    uint64_t num_recv_errs;
    uint64_t num_bytes_sent;
    uint64_t num_packets_sent;
    uint64_t num_send_errs;
} pmix_net_stats_t;

/* statistics of a node (memory figures in MBytes) */
typedef struct pmix_node_stats {
    char *node;
    float la;
    float la5;
    float la15;
    float total_mem;
    float free_mem;
    float buffers;
    float cached;
    float swap_cached;
    float swap_total;
    float swap_free;
    float mapped;
    struct timeval sample_time;
    pmix_disk_stats_t *diskstats;
    size_t ndiskstats;
    pmix_net_stats_t *netstats;
    size_t nnetstats;
} pmix_node_stats_t;

/* statistics of a process (memory figures in MBytes) */
typedef struct pmix_proc_stats {
    char *node;
    pmix_proc_t proc;
    pid_t pid;
    char *cmd;
    char state;
    struct timeval time;
    float percent_cpu;
    int32_t priority;
    uint16_t num_threads;
    float pss;
    float vsize;
    float rss;
    float peak_vsize;
    uint16_t processor;
    struct timeval sample_time;
} pmix_proc_stats_t;

/* a typed value; `type` selects the member of `data` */
typedef struct pmix_value {
    pmix_data_type_t type;
    union {
        bool flag;
        uint8_t byte;
        char *string;
        size_t size;
        pid_t pid;
        int integer;
        int8_t int8;
        int16_t int16;
        int32_t int32;
        int64_t int64;
        unsigned int uint;
        uint8_t uint8;
        uint16_t uint16;
        uint32_t uint32;
        uint64_t uint64;
        float fval;
        double dval;
        struct timeval tv;
        time_t time;
        pmix_status_t status;
        pmix_rank_t rank;
        pmix_nspace_t *nspace;
        pmix_proc_t *proc;
        pmix_byte_object_t bo;
        pmix_persistence_t persist;
        pmix_scope_t scope;
        pmix_data_range_t range;
        pmix_proc_state_t state;
        pmix_proc_info_t *pinfo;
        pmix_data_array_t *darray;
        void *ptr;
        pmix_alloc_directive_t adir;
        pmix_envar_t envar;
        pmix_coord_t *coord;
        pmix_link_state_t linkstate;
        pmix_job_state_t jstate;
        pmix_topology_t *topo;
        pmix_cpuset_t *cpuset;
        pmix_locality_t locality;
        pmix_geometry_t *geometry;
        pmix_device_type_t devtype;
        pmix_device_distance_t *devdist;
        pmix_endpoint_t *endpoint;
        pmix_data_buffer_t *dbuf;
        pmix_proc_stats_t *pstats;
        pmix_disk_stats_t *dkstats;
        pmix_net_stats_t *netstats;
        pmix_node_stats_t *ndstats;
    } data;
} pmix_value_t;

/* a key/value pair with directive flags */
typedef struct pmix_info {
    pmix_key_t key;
    pmix_info_directives_t flags;
    pmix_value_t value;
} pmix_info_t;

/* published data: owner, key, value */
typedef struct pmix_pdata {
    pmix_proc_t proc;
    pmix_key_t key;
    pmix_value_t value;
} pmix_pdata_t;

/* an application to spawn */
typedef struct pmix_app {
    char *cmd;
    char **argv;
    char **env;
    char *cwd;
    int maxprocs;
    pmix_info_t *info;
    size_t ninfo;
} pmix_app_t;

/* a query: NULL-terminated keys plus qualifiers */
typedef struct pmix_query {
    char **keys;
    pmix_info_t *qualifiers;
    size_t nqual;
} pmix_query_t;

/* a registered attribute */
typedef struct pmix_regattr {
    char *name;
    pmix_key_t string;
    pmix_data_type_t type;
    char **description;
} pmix_regattr_t;

/* a fabric registration handle */
typedef struct pmix_fabric {
    char *name;
    size_t index;
    pmix_info_t *info;
    size_t ninfo;
    void *module;
} pmix_fabric_t;

/****  CALLBACK TYPES  ****/
typedef void (*pmix_release_cbfunc_t)(void *cbdata);
typedef void (*pmix_modex_cbfunc_t)(pmix_status_t status, const char *data, size_t ndata, void *cbdata, pmix_release_cbfunc_t release_fn, void *release_cbdata);
typedef void (*pmix_spawn_cbfunc_t)(pmix_status_t status, pmix_nspace_t nspace, void *cbdata);
typedef void (*pmix_op_cbfunc_t)(pmix_status_t status, void *cbdata);
typedef void (*pmix_lookup_cbfunc_t)(pmix_status_t status, pmix_pdata_t data[], size_t ndata, void *cbdata);
typedef void (*pmix_event_notification_cbfunc_fn_t)(pmix_status_t status, pmix_info_t *results, size_t nresults, pmix_op_cbfunc_t cbfunc, void *thiscbdata, void *notification_cbdata);
typedef void (*pmix_notification_fn_t)(size_t evhdlr_registration_id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata);
typedef void (*pmix_hdlr_reg_cbfunc_t)(pmix_status_t status, size_t refid, void *cbdata);
typedef void (*pmix_evhdlr_reg_cbfunc_t)(pmix_status_t status, size_t refid, void *cbdata);
typedef void (*pmix_value_cbfunc_t)(pmix_status_t status, pmix_value_t *kv, void *cbdata);
typedef void (*pmix_info_cbfunc_t)(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata, pmix_release_cbfunc_t release_fn, void *release_cbdata);
typedef void (*pmix_credential_cbfunc_t)(pmix_status_t status, pmix_byte_object_t *credential, pmix_info_t info[], size_t ninfo, void *cbdata);
typedef void (*pmix_validation_cbfunc_t)(pmix_status_t status, pmix_info_t info[], size_t ninfo, void *cbdata);
typedef void (*pmix_device_dist_cbfunc_t)(pmix_status_t status, pmix_device_distance_t *dist, size_t ndist, void *cbdata, pmix_release_cbfunc_t release_fn, void *release_cbdata);

/****  ZPMIX HELPERS USED BY THE MACROS BELOW (exported, not part of the standard)  ****/
/* copy at most `max` chars of `src` into `dst` (which has room for max+1) and terminate it */
PMIX_EXPORT void zpmix_load_string(char *dst, const char *src, size_t max);
/* strdup() that strict C11 programs can call; NULL stays NULL */
PMIX_EXPORT char *zpmix_strdup(const char *s);
/* length of a namespace, at most PMIX_MAX_NSLEN+1 */
PMIX_EXPORT size_t zpmix_nslen(const char *ns);
/* NULL-terminated string arrays ("argv") */
PMIX_EXPORT int zpmix_argv_count(char **argv);
PMIX_EXPORT pmix_status_t zpmix_argv_append(char ***argv, const char *arg);
PMIX_EXPORT pmix_status_t zpmix_argv_prepend(char ***argv, const char *arg);
PMIX_EXPORT pmix_status_t zpmix_argv_append_unique(char ***argv, const char *arg);
PMIX_EXPORT void zpmix_argv_free(char **argv);
PMIX_EXPORT char **zpmix_argv_split(const char *src, int delimiter);
PMIX_EXPORT char **zpmix_argv_split_with_empty(const char *src, int delimiter);
PMIX_EXPORT char *zpmix_argv_join(char **argv, int delimiter);
PMIX_EXPORT char **zpmix_argv_copy(char **argv);
PMIX_EXPORT pmix_status_t zpmix_setenv(const char *name, const char *value, bool overwrite,
                                       char ***env);
/* Generic per-type object management: `type` is a PMIx data type code and the objects are
 * the C type that code stands for (pmix_info_t for PMIX_INFO, char* for PMIX_STRING ...). */
PMIX_EXPORT size_t zpmix_type_size(pmix_data_type_t type);
/* calloc `n` zeroed objects (PMIX_INFO: the last one is marked PMIX_INFO_ARRAY_END) */
PMIX_EXPORT void *zpmix_array_create(pmix_data_type_t type, size_t n);
/* release what one object owns, leaving it zeroed */
PMIX_EXPORT void zpmix_object_destruct(pmix_data_type_t type, void *obj);
/* destruct `n` objects and free the array */
PMIX_EXPORT void zpmix_array_free(pmix_data_type_t type, void *array, size_t n);
/* deep copy one object into `dst` (which is overwritten, not destructed) */
PMIX_EXPORT pmix_status_t zpmix_object_xfer(pmix_data_type_t type, void *dst, const void *src);
PMIX_EXPORT pmix_coord_t *zpmix_coord_create(size_t dims, size_t n);
PMIX_EXPORT pmix_boolean_t zpmix_check_true(const pmix_value_t *value);
PMIX_EXPORT void zpmix_multicluster_nspace_construct(char *target, const char *cluster,
                                                     const char *nspace);
PMIX_EXPORT void zpmix_multicluster_nspace_parse(const char *target, char *cluster,
                                                 char *nspace);
PMIX_EXPORT void zpmix_data_buffer_load(pmix_data_buffer_t *buffer, char *bytes, size_t size);
PMIX_EXPORT void zpmix_data_buffer_unload(pmix_data_buffer_t *buffer, char **bytes,
                                          size_t *size);
PMIX_EXPORT pmix_status_t zpmix_data_array_construct(pmix_data_array_t *array, size_t n,
                                                     pmix_data_type_t type);
/* (the PMIx_* functions these macros call are declared in pmix_deprecated.h and pmix.h) */

/****  STRING AND ARGV HELPERS THAT PMIx PROGRAMS CALL BESIDE THE API  ****/
/* Not in the standard, but programs written for the reference implementation (its own examples
 * among them) call these by name. Static inline, as there: they add no symbol to the ABI. */
/* copy at most `len` chars of `src` and terminate `dest` (which has room for len+1) */
static inline void pmix_strncpy(char *dest, const char *src, size_t len) {
    size_t i = 0;
    for (; i < len && src[i] != '\0'; ++i) dest[i] = src[i];
    dest[i] = '\0';
}
static inline size_t pmix_keylen(const char *src) {
    size_t i = 0;
    if (NULL != src)
        while (i < PMIX_MAX_KEYLEN && src[i] != '\0') ++i;
    return i;
}
static inline size_t pmix_nslen(const char *src) {
    size_t i = 0;
    if (NULL != src)
        while (i < PMIX_MAX_NSLEN && src[i] != '\0') ++i;
    return i;
}
static inline int pmix_argv_count(char **argv) {
    return zpmix_argv_count(argv);
}
static inline pmix_status_t pmix_argv_append_nosize(char ***argv, const char *arg) {
    return zpmix_argv_append(argv, arg);
}
static inline pmix_status_t pmix_argv_prepend_nosize(char ***argv, const char *arg) {
    return zpmix_argv_prepend(argv, arg);
}
static inline pmix_status_t pmix_argv_append_unique_nosize(char ***argv, const char *arg) {
    return zpmix_argv_append_unique(argv, arg);
}
static inline void pmix_argv_free(char **argv) {
    zpmix_argv_free(argv);
}
/* splits at `delimiter`: without the empty fields, or with them */
static inline char **pmix_argv_split(const char *src, int delimiter) {
    return zpmix_argv_split(src, delimiter);
}
static inline char **pmix_argv_split_with_empty(const char *src, int delimiter) {
    return zpmix_argv_split_with_empty(src, delimiter);
}
static inline char *pmix_argv_join(char **argv, int delimiter) {
    return zpmix_argv_join(argv, delimiter);
}
static inline char **pmix_argv_copy(char **argv) {
    return zpmix_argv_copy(argv);
}
/* sets NAME=VALUE in `*env` (an argv-style environment), or in the process's with env == NULL */
static inline pmix_status_t pmix_setenv(const char *name, const char *value, bool overwrite,
                                        char ***env) {
    return zpmix_setenv(name, value, overwrite, env);
}

/****  HELPER MACROS  ****/
#define PMIX_RANK_IS_VALID(r) ((r) < PMIX_RANK_VALID)
#define PMIX_SYSTEM_EVENT(a) (PMIX_EVENT_SYS_OTHER <= (a) && (a) <= PMIX_EVENT_SYS_BASE)

/* keys, namespaces and process IDs */
#define PMIX_CHECK_KEY(a, b) (0 == strncmp((a)->key, (b), PMIX_MAX_KEYLEN))
#define PMIX_CHECK_RESERVED_KEY(a) (0 == strncmp((a), "pmix", 4))
#define PMIX_LOAD_KEY(a, b) zpmix_load_string((char *)(a), (b), PMIX_MAX_KEYLEN)
#define PMIX_LOAD_NSPACE(a, b) zpmix_load_string((char *)(a), (b), PMIX_MAX_NSLEN)
#define PMIX_NSPACE_INVALID(a) (NULL == (a) || 0 == zpmix_nslen(a))
#define PMIX_CHECK_NSPACE(a, b) \
    (PMIX_NSPACE_INVALID(a) || PMIX_NSPACE_INVALID(b) || 0 == strncmp((a), (b), PMIX_MAX_NSLEN))
#define PMIX_LOAD_PROCID(a, b, c)          \
    do {                                   \
        PMIX_LOAD_NSPACE((a)->nspace, (b)); \
        (a)->rank = (c);                   \
    } while (0)
#define PMIX_XFER_PROCID(a, b) memcpy((a), (b), sizeof(pmix_proc_t))
#define PMIX_PROCID_XFER(a, b) PMIX_XFER_PROCID(a, b)
#define PMIX_CHECK_RANK(a, b) \
    ((a) == (b) || PMIX_RANK_WILDCARD == (a) || PMIX_RANK_WILDCARD == (b))
#define PMIX_CHECK_PROCID(a, b) \
    (PMIX_CHECK_NSPACE((a)->nspace, (b)->nspace) && PMIX_CHECK_RANK((a)->rank, (b)->rank))
#define PMIX_PROCID_INVALID(a) (PMIX_NSPACE_INVALID((a)->nspace) || PMIX_RANK_INVALID == (a)->rank)

/* argv-style string arrays and environments */
#define PMIX_ARGV_COUNT(r, a) (r) = zpmix_argv_count(a)
#define PMIX_ARGV_APPEND(r, a, b) (r) = zpmix_argv_append(&(a), (b))
#define PMIX_ARGV_PREPEND(r, a, b) (r) = zpmix_argv_prepend(&(a), (b))
#define PMIX_ARGV_APPEND_UNIQUE(r, a, b) (r) = zpmix_argv_append_unique(&(a), (b))
#define PMIX_ARGV_FREE(a) zpmix_argv_free(a)
#define PMIX_ARGV_SPLIT(a, b, c) (a) = zpmix_argv_split((b), (c))
#define PMIX_ARGV_JOIN(a, b, c) (a) = zpmix_argv_join((b), (c))
#define PMIX_ARGV_COPY(a, b) (a) = zpmix_argv_copy(b)
#define PMIX_SETENV(r, a, b, c) (r) = zpmix_setenv((a), (b), true, (c))

/* generic shapes used by the per-type macros */
#define ZPMIX_CONSTRUCT_(m) memset((m), 0, sizeof(*(m)))
#define ZPMIX_CREATE_(m, n, code, ctype) (m) = (ctype *)zpmix_array_create((code), (n))
#define ZPMIX_RELEASE_(m, code)              \
    do {                                     \
        zpmix_array_free((code), (m), 1);    \
        (m) = NULL;                          \
    } while (0)
#define ZPMIX_FREE_(m, n, code)              \
    do {                                     \
        zpmix_array_free((code), (m), (n));  \
        (m) = NULL;                          \
    } while (0)

/* coordinates */
#define PMIX_COORD_CREATE(m, d, n) (m) = zpmix_coord_create((d), (n))
#define PMIX_COORD_CONSTRUCT(m) ZPMIX_CONSTRUCT_(m)
#define PMIX_COORD_DESTRUCT(m) zpmix_object_destruct(PMIX_COORD, (m))
#define PMIX_COORD_FREE(m, n) ZPMIX_FREE_(m, n, PMIX_COORD)

/* cpusets and topologies */
#define PMIX_CPUSET_CONSTRUCT(m) ZPMIX_CONSTRUCT_(m)
#define PMIX_CPUSET_CREATE(m, n) ZPMIX_CREATE_(m, n, PMIX_PROC_CPUSET, pmix_cpuset_t)
#define PMIX_TOPOLOGY_CONSTRUCT(m) ZPMIX_CONSTRUCT_(m)
#define PMIX_TOPOLOGY_CREATE(m, n) ZPMIX_CREATE_(m, n, PMIX_TOPO, pmix_topology_t)

/* geometries, device distances, endpoints */
#define PMIX_GEOMETRY_CONSTRUCT(m) ZPMIX_CONSTRUCT_(m)
#define PMIX_GEOMETRY_DESTRUCT(m) zpmix_object_destruct(PMIX_GEOMETRY, (m))
#define PMIX_GEOMETRY_CREATE(m, n) ZPMIX_CREATE_(m, n, PMIX_GEOMETRY, pmix_geometry_t)
#define PMIX_GEOMETRY_FREE(m, n) ZPMIX_FREE_(m, n, PMIX_GEOMETRY)
#define PMIX_DEVICE_DIST_CONSTRUCT(m) ZPMIX_CONSTRUCT_(m)
#define PMIX_DEVICE_DIST_DESTRUCT(m) zpmix_object_destruct(PMIX_DEVICE_DIST, (m))
#define PMIX_DEVICE_DIST_CREATE(m, n) ZPMIX_CREATE_(m, n, PMIX_DEVICE_DIST, pmix_device_distance_t)
#define PMIX_DEVICE_DIST_FREE(m, n) ZPMIX_FREE_(m, n, PMIX_DEVICE_DIST)
#define PMIX_ENDPOINT_CONSTRUCT(m) ZPMIX_CONSTRUCT_(m)
#define PMIX_ENDPOINT_DESTRUCT(m) zpmix_object_destruct(PMIX_ENDPOINT, (m))
#define PMIX_ENDPOINT_CREATE(m, n) ZPMIX_CREATE_(m, n, PMIX_ENDPOINT, pmix_endpoint_t)
#define PMIX_ENDPOINT_FREE(m, n) ZPMIX_FREE_(m, n, PMIX_ENDPOINT)

/* byte objects: LOAD hands the bytes over to the object, then clears `d` and `s` */
#define PMIX_BYTE_OBJECT_CREATE(m, n) ZPMIX_CREATE_(m, n, PMIX_BYTE_OBJECT, pmix_byte_object_t)
#define PMIX_BYTE_OBJECT_CONSTRUCT(m) ZPMIX_CONSTRUCT_(m)
#define PMIX_BYTE_OBJECT_DESTRUCT(m) zpmix_object_destruct(PMIX_BYTE_OBJECT, (m))
#define PMIX_BYTE_OBJECT_FREE(m, n) ZPMIX_FREE_(m, n, PMIX_BYTE_OBJECT)
#define PMIX_BYTE_OBJECT_LOAD(b, d, s) \
    do {                               \
        (b)->bytes = (char *)(d);      \
        (d) = NULL;                    \
        (b)->size = (s);               \
        (s) = 0;                       \
    } while (0)

/* environment variable directives */
#define PMIX_ENVAR_CREATE(m, n) ZPMIX_CREATE_(m, n, PMIX_ENVAR, pmix_envar_t)
#define PMIX_ENVAR_FREE(m, n) ZPMIX_FREE_(m, n, PMIX_ENVAR)
#define PMIX_ENVAR_CONSTRUCT(m) ZPMIX_CONSTRUCT_(m)
#define PMIX_ENVAR_DESTRUCT(m) zpmix_object_destruct(PMIX_ENVAR, (m))
#define PMIX_ENVAR_LOAD(m, e, v, s)                         \
    do {                                                    \
        (m)->envar = (NULL == (e)) ? NULL : zpmix_strdup(e);      \
        (m)->value = (NULL == (v)) ? NULL : zpmix_strdup(v);      \
        (m)->separator = (s);                               \
    } while (0)

/* data buffers: LOAD adopts the bytes, UNLOAD hands the unread bytes to the caller */
#define PMIX_DATA_BUFFER_CREATE(m) ZPMIX_CREATE_(m, 1, PMIX_DATA_BUFFER, pmix_data_buffer_t)
#define PMIX_DATA_BUFFER_RELEASE(m) ZPMIX_RELEASE_(m, PMIX_DATA_BUFFER)
#define PMIX_DATA_BUFFER_CONSTRUCT(m) ZPMIX_CONSTRUCT_(m)
#define PMIX_DATA_BUFFER_DESTRUCT(m) zpmix_object_destruct(PMIX_DATA_BUFFER, (m))
#define PMIX_DATA_BUFFER_LOAD(b, d, s) zpmix_data_buffer_load((b), (char *)(d), (s))
#define PMIX_DATA_BUFFER_UNLOAD(b, d, s)                   \
    do {                                                   \
        char *_zpmix_d = NULL;                             \
        size_t _zpmix_s = 0;                               \
        zpmix_data_buffer_unload((b), &_zpmix_d, &_zpmix_s); \
        (d) = _zpmix_d;                                    \
        (s) = _zpmix_s;                                    \
    } while (0)

/* process IDs */
#define PMIX_PROC_CREATE(m, n) ZPMIX_CREATE_(m, n, PMIX_PROC, pmix_proc_t)
#define PMIX_PROC_RELEASE(m) ZPMIX_RELEASE_(m, PMIX_PROC)
#define PMIX_PROC_CONSTRUCT(m) ZPMIX_CONSTRUCT_(m)
#define PMIX_PROC_DESTRUCT(m)
#define PMIX_PROC_FREE(m, n) ZPMIX_FREE_(m, n, PMIX_PROC)
#define PMIX_PROC_LOAD(m, n, r) PMIX_LOAD_PROCID(m, n, r)
/* "cluster:nspace" */
#define PMIX_MULTICLUSTER_NSPACE_CONSTRUCT(t, c, n) \
    zpmix_multicluster_nspace_construct((char *)(t), (c), (n))
#define PMIX_MULTICLUSTER_NSPACE_PARSE(t, c, n) \
    zpmix_multicluster_nspace_parse((t), (char *)(c), (char *)(n))

/* process info */
#define PMIX_PROC_INFO_CREATE(m, n) ZPMIX_CREATE_(m, n, PMIX_PROC_INFO, pmix_proc_info_t)
#define PMIX_PROC_INFO_RELEASE(m) ZPMIX_RELEASE_(m, PMIX_PROC_INFO)
#define PMIX_PROC_INFO_CONSTRUCT(m) ZPMIX_CONSTRUCT_(m)
#define PMIX_PROC_INFO_DESTRUCT(m) zpmix_object_destruct(PMIX_PROC_INFO, (m))
#define PMIX_PROC_INFO_FREE(m, n) ZPMIX_FREE_(m, n, PMIX_PROC_INFO)

/* statistics */
#define PMIX_PROC_STATS_CREATE(m, n) ZPMIX_CREATE_(m, n, PMIX_PROC_STATS, pmix_proc_stats_t)
#define PMIX_PROC_STATS_RELEASE(m) ZPMIX_RELEASE_(m, PMIX_PROC_STATS)
#define PMIX_PROC_STATS_CONSTRUCT(m) ZPMIX_CONSTRUCT_(m)
#define PMIX_PROC_STATS_DESTRUCT(m) zpmix_object_destruct(PMIX_PROC_STATS, (m))
#define PMIX_PROC_STATS_FREE(m, n) ZPMIX_FREE_(m, n, PMIX_PROC_STATS)
#define PMIX_DISK_STATS_CREATE(m, n) ZPMIX_CREATE_(m, n, PMIX_DISK_STATS, pmix_disk_stats_t)
#define PMIX_DISK_STATS_RELEASE(m) ZPMIX_RELEASE_(m, PMIX_DISK_STATS)
#define PMIX_DISK_STATS_CONSTRUCT(m) ZPMIX_CONSTRUCT_(m)
#define PMIX_DISK_STATS_DESTRUCT(m) zpmix_object_destruct(PMIX_DISK_STATS, (m))
#define PMIX_DISK_STATS_FREE(m, n) ZPMIX_FREE_(m, n, PMIX_DISK_STATS)
#define PMIX_NET_STATS_CREATE(m, n) ZPMIX_CREATE_(m, n, PMIX_NET_STATS, pmix_net_stats_t)
#define PMIX_NET_STATS_RELEASE(m) ZPMIX_RELEASE_(m, PMIX_NET_STATS)
#define PMIX_NET_STATS_CONSTRUCT(m) ZPMIX_CONSTRUCT_(m)
#define PMIX_NET_STATS_DESTRUCT(m) zpmix_object_destruct(PMIX_NET_STATS, (m))
#define PMIX_NET_STATS_FREE(m, n) ZPMIX_FREE_(m, n, PMIX_NET_STATS)
#define PMIX_NODE_STATS_CREATE(m, n) ZPMIX_CREATE_(m, n, PMIX_NODE_STATS, pmix_node_stats_t)
#define PMIX_NODE_STATS_CONSTRUCT(m) ZPMIX_CONSTRUCT_(m)
#define PMIX_NODE_STATS_DESTRUCT(m) zpmix_object_destruct(PMIX_NODE_STATS, (m))
#define PMIX_NODE_STATS_FREE(m, n) ZPMIX_FREE_(m, n, PMIX_NODE_STATS)
#define PMIX_NODE_STATS_RELEASE(m) ZPMIX_RELEASE_(m, PMIX_NODE_STATS)

/* values */
#define PMIX_VALUE_CREATE(m, n) ZPMIX_CREATE_(m, n, PMIX_VALUE, pmix_value_t)
#define PMIX_VALUE_CONSTRUCT(m) ZPMIX_CONSTRUCT_(m)
#define PMIX_VALUE_DESTRUCT(m) PMIx_Value_destruct(m)
#define PMIX_VALUE_RELEASE(m) ZPMIX_RELEASE_(m, PMIX_VALUE)
#define PMIX_VALUE_FREE(m, n) ZPMIX_FREE_(m, n, PMIX_VALUE)
/* s = status, m = value, n = destination variable, t = its C type */
#define PMIX_VALUE_GET_NUMBER(s, m, n, t)                                     \
    do {                                                                      \
        (s) = PMIX_SUCCESS;                                                   \
        switch ((m)->type) {                                                  \
            case PMIX_SIZE: (n) = (t)((m)->data.size); break;                 \
            case PMIX_INT: (n) = (t)((m)->data.integer); break;               \
            case PMIX_INT8: (n) = (t)((m)->data.int8); break;                 \
            case PMIX_INT16: (n) = (t)((m)->data.int16); break;               \
            case PMIX_INT32: (n) = (t)((m)->data.int32); break;               \
            case PMIX_INT64: (n) = (t)((m)->data.int64); break;               \
            case PMIX_UINT: (n) = (t)((m)->data.uint); break;                 \
            case PMIX_UINT8: (n) = (t)((m)->data.uint8); break;               \
            case PMIX_UINT16: (n) = (t)((m)->data.uint16); break;             \
            case PMIX_UINT32: (n) = (t)((m)->data.uint32); break;             \
            case PMIX_UINT64: (n) = (t)((m)->data.uint64); break;             \
            case PMIX_FLOAT: (n) = (t)((m)->data.fval); break;                \
            case PMIX_DOUBLE: (n) = (t)((m)->data.dval); break;               \
            case PMIX_PID: (n) = (t)((m)->data.pid); break;                   \
            case PMIX_PROC_RANK: (n) = (t)((m)->data.rank); break;            \
            case PMIX_STATUS: (n) = (t)((m)->data.status); break;             \
            default: (s) = PMIX_ERR_BAD_PARAM; break;                         \
        }                                                                     \
    } while (0)

/* info */
#define PMIX_INFO_CONSTRUCT(m) ZPMIX_CONSTRUCT_(m)
#define PMIX_INFO_CREATE(m, n) ZPMIX_CREATE_(m, n, PMIX_INFO, pmix_info_t)
#define PMIX_INFO_DESTRUCT(m) zpmix_object_destruct(PMIX_INFO, (m))
#define PMIX_INFO_FREE(m, n) ZPMIX_FREE_(m, n, PMIX_INFO)
#define PMIX_INFO_REQUIRED(m) ((m)->flags |= PMIX_INFO_REQD)
#define PMIX_INFO_OPTIONAL(m) ((m)->flags &= ~PMIX_INFO_REQD)
#define PMIX_INFO_IS_REQUIRED(m) (0 != ((m)->flags & PMIX_INFO_REQD))
#define PMIX_INFO_IS_OPTIONAL(m) (0 == ((m)->flags & PMIX_INFO_REQD))
#define PMIX_INFO_PROCESSED(m) ((m)->flags |= PMIX_INFO_REQD_PROCESSED)
#define PMIX_INFO_WAS_PROCESSED(m) (0 != ((m)->flags & PMIX_INFO_REQD_PROCESSED))
#define PMIX_INFO_SET_END(m) ((m)->flags |= PMIX_INFO_ARRAY_END)
#define PMIX_INFO_IS_END(m) (0 != ((m)->flags & PMIX_INFO_ARRAY_END))
#define PMIX_INFO_SET_QUALIFIER(i) ((i)->flags |= PMIX_INFO_QUALIFIER)
#define PMIX_INFO_IS_QUALIFIER(i) (0 != ((i)->flags & PMIX_INFO_QUALIFIER))
/* a persistent info's value is not released by PMIX_INFO_DESTRUCT/FREE */
#define PMIX_INFO_SET_PERSISTENT(ii) ((ii)->flags |= PMIX_INFO_PERSISTENT)
#define PMIX_INFO_IS_PERSISTENT(ii) (0 != ((ii)->flags & PMIX_INFO_PERSISTENT))
/* a value is "true" if it has no type (presence) or is a true bool / "true"-like string */
#define PMIX_CHECK_TRUE(a) (PMIX_BOOL_TRUE == zpmix_check_true(a))
#define PMIX_CHECK_BOOL(a) (PMIX_NON_BOOL != zpmix_check_true(a))
#define PMIX_INFO_TRUE(m) PMIX_CHECK_TRUE(&(m)->value)

/* published data */
#define PMIX_PDATA_CREATE(m, n) ZPMIX_CREATE_(m, n, PMIX_PDATA, pmix_pdata_t)
#define PMIX_PDATA_CONSTRUCT(m) ZPMIX_CONSTRUCT_(m)
#define PMIX_PDATA_RELEASE(m) ZPMIX_RELEASE_(m, PMIX_PDATA)
#define PMIX_PDATA_DESTRUCT(m) zpmix_object_destruct(PMIX_PDATA, (m))
#define PMIX_PDATA_FREE(m, n) ZPMIX_FREE_(m, n, PMIX_PDATA)

/* applications */
#define PMIX_APP_CREATE(m, n) ZPMIX_CREATE_(m, n, PMIX_APP, pmix_app_t)
#define PMIX_APP_INFO_CREATE(m, n)               \
    do {                                         \
        PMIX_INFO_CREATE((m)->info, (n));        \
        (m)->ninfo = (NULL == (m)->info) ? 0 : (n); \
    } while (0)
#define PMIX_APP_RELEASE(m) ZPMIX_RELEASE_(m, PMIX_APP)
#define PMIX_APP_CONSTRUCT(m) ZPMIX_CONSTRUCT_(m)
#define PMIX_APP_DESTRUCT(m) zpmix_object_destruct(PMIX_APP, (m))
#define PMIX_APP_FREE(m, n) ZPMIX_FREE_(m, n, PMIX_APP)

/* queries */
#define PMIX_QUERY_CREATE(m, n) ZPMIX_CREATE_(m, n, PMIX_QUERY, pmix_query_t)
#define PMIX_QUERY_QUALIFIERS_CREATE(m, n)           \
    do {                                             \
        PMIX_INFO_CREATE((m)->qualifiers, (n));      \
        (m)->nqual = (NULL == (m)->qualifiers) ? 0 : (n); \
    } while (0)
#define PMIX_QUERY_RELEASE(m) ZPMIX_RELEASE_(m, PMIX_QUERY)
#define PMIX_QUERY_CONSTRUCT(m) ZPMIX_CONSTRUCT_(m)
#define PMIX_QUERY_DESTRUCT(m) zpmix_object_destruct(PMIX_QUERY, (m))
#define PMIX_QUERY_FREE(m, n) ZPMIX_FREE_(m, n, PMIX_QUERY)

/* registered attributes: LOAD copies name, key, type and appends description `v` */
#define PMIX_REGATTR_CONSTRUCT(a) ZPMIX_CONSTRUCT_(a)
#define PMIX_REGATTR_LOAD(a, n, k, t, v)                                  \
    do {                                                                  \
        const char *_zpmix_n = (n), *_zpmix_k = (k), *_zpmix_v = (v);     \
        (a)->name = (NULL == _zpmix_n) ? NULL : zpmix_strdup(_zpmix_n);         \
        PMIX_LOAD_KEY((a)->string, _zpmix_k);                             \
        (a)->type = (t);                                                  \
        if (NULL != _zpmix_v) (void)zpmix_argv_append(&(a)->description, _zpmix_v); \
    } while (0)
#define PMIX_REGATTR_DESTRUCT(a) zpmix_object_destruct(PMIX_REGATTR, (a))
#define PMIX_REGATTR_CREATE(m, n) ZPMIX_CREATE_(m, n, PMIX_REGATTR, pmix_regattr_t)
#define PMIX_REGATTR_FREE(m, n) ZPMIX_FREE_(m, n, PMIX_REGATTR)
#define PMIX_REGATTR_XFER(a, b) (void)zpmix_object_xfer(PMIX_REGATTR, (a), (b))

/* fabrics */
#define PMIX_FABRIC_CONSTRUCT(x) ZPMIX_CONSTRUCT_(x)

/* data arrays */
#define PMIX_DATA_ARRAY_INIT(m, t) \
    do {                           \
        (m)->array = NULL;         \
        (m)->type = (t);           \
        (m)->size = 0;             \
    } while (0)
#define PMIX_DATA_ARRAY_CONSTRUCT(m, n, t) (void)zpmix_data_array_construct((m), (n), (t))
#define PMIX_DATA_ARRAY_CREATE(m, n, t)                                          \
    do {                                                                         \
        (m) = (pmix_data_array_t *)calloc(1, sizeof(pmix_data_array_t));         \
        if (NULL != (m)) (void)zpmix_data_array_construct((m), (n), (t));        \
    } while (0)
#define PMIX_DATA_ARRAY_DESTRUCT(m) PMIx_Data_array_destruct(m)
#define PMIX_DATA_ARRAY_FREE(m)             \
    do {                                    \
        if (NULL != (m)) {                  \
            PMIx_Data_array_destruct(m);    \
            free(m);                        \
            (m) = NULL;                     \
        }                                   \
    } while (0)

#ifdef __cplusplus
}
#endif

#include <pmix_deprecated.h>

#endif /* PMIx_COMMON_H */
