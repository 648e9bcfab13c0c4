/// One step of a chain and what to call when it succeeds.
struct ChainStep: Sendable {
    let member: GroupMember
    let callback: Callback?

    enum Callback: Sendable {
        case request(@Sendable (ChainTask, RequestTask) -> Void)
        case group(@Sendable (ChainTask, any RequestGroupTask) -> Void)
    }

    func call(_ chain: ChainTask, after run: MemberRun) {
        switch (callback, run) {
        case (.request(let callback), .request(let task)): callback(chain, task)
        case (.group(let callback), .group(let group)): callback(chain, group)
        default: break
        }
    }
}
