// The upstream netpol scenarios live with kube-proxy in nftables mode (test/helpers/netpol-live-scenarios.ts).
import { liveScenarioSuite } from '../helpers/netpol-live-scenarios.js';

liveScenarioSuite('nftables');
