#include "policies/threshold_table.h"

#include <gtest/gtest.h>

#include <optional>

namespace ebb::policies {
namespace {

// A cell of the paper's tables: num/den times U_on (or U_off); den == 0 is "n.a.".
struct Cell {
  int num;
  int den;
};
struct PaperRow {
  int linksOn;
  Cell on, off;
  Cell factor;
  Cell effOn, effOff;
};

double value(Cell c, double base) {
  return static_cast<double>(c.num) / static_cast<double>(c.den) * base;
}

void expectCell(const std::optional<double>& got, Cell want, double base, const char* what,
                int row) {
  if (want.den == 0) {
    EXPECT_FALSE(got.has_value()) << what << " row " << row << " should be n.a.";
    return;
  }
  ASSERT_TRUE(got.has_value()) << what << " row " << row;
  EXPECT_NEAR(*got, value(want, base), 1e-15) << what << " row " << row;
}

// Table 1 of Alonso et al., as printed: static thresholds of a 4-ary switch.
//   on up links | static on | static off | factor | effective on | effective off
TEST(ThresholdTable, ReproducesTable1ForK4) {
  const double uOff = 0.03, uOn = 0.15;
  const PaperRow paper[] = {
      {4, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      {3, {1, 1}, {1, 1}, {3, 4}, {3, 4}, {3, 4}},
      {2, {1, 1}, {1, 1}, {2, 4}, {2, 4}, {2, 4}},
      {1, {1, 1}, {1, 1}, {1, 4}, {1, 4}, {1, 4}},
  };
  const auto rows = thresholdTable(Thresholds::makeStatic(uOff, uOn), 4);
  ASSERT_TRUE(rows.isOk()) << rows.status().toString();
  ASSERT_EQ(rows->size(), 4u);
  for (std::size_t r = 0; r < 4; ++r) {
    const PaperRow& p = paper[r];
    const ThresholdRow& got = (*rows)[r];
    EXPECT_EQ(got.linksOn, p.linksOn);
    expectCell(got.on, p.on, uOn, "on", p.linksOn);
    EXPECT_NEAR(got.off, value(p.off, uOff), 1e-15);
    EXPECT_NEAR(got.factor, value(p.factor, 1.0), 1e-15);
    expectCell(got.effectiveOn, p.effOn, uOn, "effective on", p.linksOn);
    EXPECT_NEAR(got.effectiveOff, value(p.effOff, uOff), 1e-15) << p.linksOn;
  }
  // The paper's reading: 3/4 U_on is the least load with all links on, 2/4 U_off
  // the most load that still gets down to one link.
  EXPECT_NEAR(*(*rows)[1].effectiveOn, 0.1125, 1e-15);
  EXPECT_NEAR((*rows)[2].effectiveOff, 0.015, 1e-15);
}

// Table 2: dynamic thresholds of a 4-ary switch, all in units of U_on.
TEST(ThresholdTable, ReproducesTable2ForK4) {
  for (double uOn : {0.15, 0.435, 1.0}) {
    const PaperRow paper[] = {
        {4, {0, 0}, {3, 4}, {1, 1}, {0, 0}, {3, 4}},
        {3, {1, 1}, {2, 4}, {3, 4}, {3, 4}, {6, 16}},
        {2, {1, 1}, {1, 4}, {2, 4}, {2, 4}, {2, 16}},
        {1, {1, 1}, {0, 1}, {1, 4}, {1, 4}, {0, 1}},
    };
    const auto rows = thresholdTable(Thresholds::makeDynamic(uOn), 4);
    ASSERT_TRUE(rows.isOk());
    ASSERT_EQ(rows->size(), 4u);
    for (std::size_t r = 0; r < 4; ++r) {
      const PaperRow& p = paper[r];
      const ThresholdRow& got = (*rows)[r];
      EXPECT_EQ(got.linksOn, p.linksOn);
      expectCell(got.on, p.on, uOn, "on", p.linksOn);
      EXPECT_NEAR(got.off, value(p.off, uOn), 1e-15) << p.linksOn;
      EXPECT_NEAR(got.factor, value(p.factor, 1.0), 1e-15);
      expectCell(got.effectiveOn, p.effOn, uOn, "effective on", p.linksOn);
      EXPECT_NEAR(got.effectiveOff, value(p.effOff, uOn), 1e-15) << p.linksOn;
    }
  }
}

// General formulas: static (i/k) U_on and (i/k) U_off; dynamic U_off(i) =
// U_on (i-1)/k, effective (i/k) U_on and i (i-1) U_on / k^2.
TEST(ThresholdTable, GeneralFormulasForEveryK) {
  for (int k = 1; k <= 64; ++k) {
    const auto st = thresholdTable(Thresholds::makeStatic(0.085, 0.435), k);
    const auto dy = thresholdTable(Thresholds::makeDynamic(0.435), k);
    ASSERT_TRUE(st.isOk() && dy.isOk());
    ASSERT_EQ(st->size(), static_cast<std::size_t>(k));
    for (int i = k; i >= 1; --i) {
      const ThresholdRow& s = (*st)[static_cast<std::size_t>(k - i)];
      const ThresholdRow& d = (*dy)[static_cast<std::size_t>(k - i)];
      ASSERT_EQ(s.linksOn, i);
      ASSERT_EQ(d.linksOn, i);
      EXPECT_DOUBLE_EQ(*s.effectiveOn, 0.435 * i / k);
      EXPECT_DOUBLE_EQ(s.effectiveOff, 0.085 * i / k);
      EXPECT_DOUBLE_EQ(d.off, 0.435 * (i - 1) / k);
      EXPECT_DOUBLE_EQ(d.effectiveOff, 0.435 * i * (i - 1) / (k * k));
      EXPECT_EQ(d.on.has_value(), i < k);
      if (i < k) {
        EXPECT_DOUBLE_EQ(*d.effectiveOn, 0.435 * i / k);
      }
      // No oscillation: the effective off threshold with i links is at most the
      // effective on threshold with i-1 (equal at i = k), so a load that turns a
      // link off cannot turn it back on.
      if (i >= 2) {
        EXPECT_LE(d.effectiveOff, 0.435 * (i - 1) / k * (1 + 1e-15));
      }
    }
  }
}

TEST(ThresholdTable, RejectsBadInput) {
  const auto noK = thresholdTable(Thresholds::makeDynamic(0.15), 0);
  ASSERT_FALSE(noK.isOk());
  EXPECT_EQ(noK.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(noK.status().message().find("k >= 1"), std::string::npos);
  const auto bad = thresholdTable(Thresholds::makeStatic(0.1, 0.15), 4);
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("U_on > 2*U_off"), std::string::npos);
}

TEST(ThresholdTable, FormatsAsMarkdown) {
  const auto rows = thresholdTable(Thresholds::makeDynamic(0.2), 4);
  const std::string md = formatThresholdTable(*rows);
  EXPECT_NE(md.find("| 4 | n.a. | 0.1500 | 1.0000 | n.a. | 0.1500 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 3 | 0.2000 | 0.1000 | 0.7500 | 0.1500 | 0.0750 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1 | 0.2000 | 0.0000 | 0.2500 | 0.0500 | 0.0000 |"), std::string::npos) << md;
}

}  // namespace
}  // namespace ebb::policies
