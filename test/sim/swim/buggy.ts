// Fault injection reachable only from tests: a node that ignores refutations (an alive update
// with a higher incarnation for a member it suspects or holds dead). The checkers must catch it.
import { SwimNode, type Update } from "../../../src/cluster/swim/index.ts";

export class IgnoresRefutations extends SwimNode {
  protected override apply(u: Update): void {
    const cur = this.member(u.id);
    if (u.state === "alive" && cur && (cur.state === "suspect" || cur.state === "dead")) return;
    super.apply(u);
  }
}
