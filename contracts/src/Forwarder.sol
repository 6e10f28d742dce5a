// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title Forwarder passes the ETH it receives on to another address through
/// an internal CALL: the payment is invisible in the block's transactions.
contract Forwarder {
    /// @notice forward sends msg.value to `to`; it reverts when that fails.
    function forward(address payable to) external payable {
        (bool ok, ) = to.call{value: msg.value}("");
        require(ok, "forward failed");
    }

    /// @notice forwardTwice splits msg.value into two internal CALLs to `to`
    /// (the second one through this contract again), one level deeper each.
    function forwardTwice(address payable to) external payable {
        uint256 half = msg.value / 2;
        (bool ok, ) = to.call{value: half}("");
        require(ok, "first forward failed");
        this.forward{value: msg.value - half}(to);
    }

    /// @notice forwardAndSwallow tries to send msg.value to a Reverter; the
    /// inner CALL fails (its frame carries an error) while the transaction
    /// succeeds and keeps the ETH.
    function forwardAndSwallow(address payable to) external payable {
        (bool ok, ) = to.call{value: msg.value}("");
        ok;
    }
}

/// @title Reverter refuses every ETH payment: a transaction sending it value
/// is mined with status 0.
contract Reverter {
    receive() external payable {
        revert("no ETH accepted");
    }
}
