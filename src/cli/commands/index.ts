// Every `kdp` command, in the order `kdp --help` lists them.

import type { Command } from '../command.js';
import { apiserverCommand } from './apiserver.js';
import { controllerManagerCommand, nodeAgentCommand, schedulerCommand } from './components.js';
import { crictlCommand } from './crictl.js';
import { diffCommand } from './diff.js';
import { dnsLookupCommand, dnsServeCommand } from './dns.js';
import { doctorCommand } from './doctor.js';
import { downCommand } from './down.js';
import {
  etcdSnapshotRestoreCommand, etcdSnapshotSaveCommand, etcdStartCommand, etcdStatusCommand, etcdStopCommand,
} from './etcd.js';
import { initCommand } from './init.js';
import { kubeconfigCommand } from './kubeconfig.js';
import { logsCommand } from './logs.js';
import { netnsCommand, shCommand } from './netns.js';
import { nodeCrashCommand, nodePartitionCommand, nodeStartCommand, nodeStopCommand } from './node.js';
import { nodeJoinCommand } from './node-join.js';
import { tokenCreateCommand, tokenDeleteCommand, tokenListCommand } from './token.js';
import { rulesCompileCommand } from './rules-compile.js';
import { rulesHistoryCommand, rulesShowCommand } from './rules.js';
import { statusCommand } from './status.js';
import { traceCommand } from './trace.js';
import { uiCommand } from './ui.js';
import { upCommand } from './up.js';
import { verifyCommand } from './verify.js';
import { versionCommand } from './version.js';

export const COMMANDS: readonly Command[] = [
  upCommand, initCommand, downCommand, statusCommand, doctorCommand, kubeconfigCommand, nodeStopCommand, nodeStartCommand,
  nodePartitionCommand, nodeCrashCommand, nodeJoinCommand, tokenCreateCommand, tokenListCommand,
  tokenDeleteCommand, etcdStatusCommand, etcdStopCommand, etcdStartCommand,
  etcdSnapshotSaveCommand, etcdSnapshotRestoreCommand,
  netnsCommand, shCommand, crictlCommand, logsCommand,
  rulesShowCommand, rulesHistoryCommand, rulesCompileCommand, traceCommand, verifyCommand, diffCommand,
  dnsLookupCommand, dnsServeCommand, uiCommand,
  apiserverCommand, controllerManagerCommand, schedulerCommand, nodeAgentCommand, versionCommand,
];
