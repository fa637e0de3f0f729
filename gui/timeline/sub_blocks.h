#pragma once
// The parts of a simulated forward or backward spent waiting on a group of
// devices (tensor-parallel all-reduces, the experts' all-to-alls, the keys
// and values of a shared sequence): drawn on a lane's communication row
// inside their block, keyed in the legend and named in the block's tooltip.
// One table keyed by kind, so that another parallel dimension adds a kind
// here rather than a setter, a counter, a colour and a tooltip line apiece.
#include <QColor>
#include <QString>
#include <array>
#include <cstdint>
#include <vector>

namespace pipewright::gui {

// In drawing order, from the block's end backwards.
enum class SubBlock : std::uint8_t { tensor, experts, context };
inline constexpr std::array<SubBlock, 3> kSubBlockKinds{SubBlock::tensor, SubBlock::experts,
                                                        SubBlock::context};

// Per kind, per stage: the seconds of one forward and of one backward. A
// kind without stages is not drawn, keyed or named.
class SubBlockSeconds {
  public:
    using PerStage = std::vector<std::array<double, 2>>;
    [[nodiscard]] PerStage& operator[](SubBlock kind) { return table_[index(kind)]; }
    [[nodiscard]] const PerStage& operator[](SubBlock kind) const { return table_[index(kind)]; }
    [[nodiscard]] bool any() const;

  private:
    static std::size_t index(SubBlock kind) { return static_cast<std::size_t>(kind); }
    std::array<PerStage, kSubBlockKinds.size()> table_;
};

[[nodiscard]] QColor sub_block_color(SubBlock kind, bool dark);
// The legend's key: "Tensor all-reduce (within F and B)".
[[nodiscard]] QString sub_block_key(SubBlock kind);
// The tooltip's line: "of which 2.1 ms in its tensor-parallel group's …".
[[nodiscard]] QString sub_block_line(SubBlock kind, const QString& duration);

}  // namespace pipewright::gui
