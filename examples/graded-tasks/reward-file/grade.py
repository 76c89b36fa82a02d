"""The task's verifier: reads answer.txt as data, writes the reward, exits 0 on a pass."""

import sys

EXPECTED = 137


def main(answer_path: str, reward_path: str) -> int:
    try:
        with open(answer_path, encoding="utf-8") as handle:
            passed = handle.read().strip() == str(EXPECTED)
    except OSError:
        passed = False
    with open(reward_path, "w", encoding="utf-8") as handle:
        handle.write("1\n" if passed else "0\n")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
