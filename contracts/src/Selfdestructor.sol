// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title Selfdestructor moves its whole balance to a beneficiary with
/// SELFDESTRUCT: no CALL frame carries the value, only the SELFDESTRUCT one.
/// Since Cancun (EIP-6780) the account is destroyed only when SELFDESTRUCT
/// runs in the transaction that created it; otherwise only the balance moves.
/// Either way the beneficiary receives the ETH.
contract Selfdestructor {
    /// @notice With `now` set, the constructor selfdestructs at once (created
    /// and destroyed in one transaction, the value of the creation going to
    /// `to`); otherwise the contract keeps msg.value until destroy.
    constructor(address payable to, bool now) payable {
        if (now) {
            selfdestruct(to);
        }
    }

    /// @notice destroy sends this contract's balance (plus msg.value) to `to`
    /// by SELFDESTRUCT. After Cancun the code stays and can be paid again.
    function destroy(address payable to) external payable {
        selfdestruct(to);
    }

    /// @notice Plain payments are kept for a later destroy.
    receive() external payable {}
}

/// @title Relay forwards ETH through a chain of nested CALLs back into itself,
/// `depth` levels deep, before the last one pays `to`.
contract Relay {
    /// @notice relay calls itself `depth` times with msg.value, then sends it
    /// to `to`; any failure reverts the whole chain.
    function relay(address payable to, uint256 depth) external payable {
        if (depth == 0) {
            (bool ok, ) = to.call{value: msg.value}("");
            require(ok, "relay failed");
            return;
        }
        this.relay{value: msg.value}(to, depth - 1);
    }

    /// @notice createAndDestroy creates a Selfdestructor in this transaction
    /// with msg.value that destroys itself in its constructor, one CALL
    /// level below the transaction: the value reaches `to` by SELFDESTRUCT.
    function createAndDestroy(address payable to) external payable {
        new Selfdestructor{value: msg.value}(to, true);
    }
}
