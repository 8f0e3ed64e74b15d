// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Shuffle sharding: a flow's hash deals it a hand of distinct queues out of a deck, the same
//! hand every time, as k8s.io/apiserver's `util/shufflesharding` deals it. Two flows share a
//! whole hand only rarely, so a noisy flow fills its own queues and leaves the others' hands
//! with at least one short queue.

/// The most bits of a hash a deal uses (kube's `MaxHashBits`).
pub const MAX_HASH_BITS: u32 = 60;

/// The bits of hash a deal of `hand_size` cards from `deck_size` needs:
/// `ceil(log2(deck_size) * hand_size)`, as kube's `RequiredEntropyBits` computes it.
pub fn required_entropy_bits(deck_size: u32, hand_size: u32) -> u32 {
    (f64::from(deck_size).log2() * f64::from(hand_size)).ceil() as u32
}

/// Deals hands of `hand_size` distinct cards out of `deck_size` from a hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dealer {
    deck_size: u32,
    hand_size: u32,
}

impl Dealer {
    /// A dealer, or the reason these sizes cannot be dealt (kube's `NewDealer` errors, same
    /// words): a size not positive, a hand larger than the deck, a deck over 2^26 cards, or a
    /// deal needing more than [`MAX_HASH_BITS`] bits.
    pub fn new(deck_size: i64, hand_size: i64) -> Result<Self, String> {
        if deck_size <= 0 || hand_size <= 0 {
            return Err(format!(
                "deckSize {deck_size} or handSize {hand_size} is not positive"
            ));
        }
        if hand_size > deck_size {
            return Err(format!(
                "handSize {hand_size} is greater than deckSize {deck_size}"
            ));
        }
        if deck_size > 1 << 26 {
            return Err(format!("deckSize {deck_size} is impractically large"));
        }
        // Both fit in u32 now: hand <= deck <= 2^26.
        let (deck, hand) = (deck_size as u32, hand_size as u32);
        if required_entropy_bits(deck, hand) > MAX_HASH_BITS {
            return Err(format!(
                "required entropy bits of deckSize {deck_size} and handSize {hand_size} is greater than {MAX_HASH_BITS}"
            ));
        }
        Ok(Self {
            deck_size: deck,
            hand_size: hand,
        })
    }

    /// The hand size.
    pub fn hand_size(&self) -> u32 {
        self.hand_size
    }

    /// The hand `hash` deals: `hand_size` distinct cards in `0..deck_size`. The hash is read
    /// as a mixed-radix number (radices deck, deck-1, ...); each digit picks among the cards
    /// not dealt yet, so every hand is equally likely for a uniform hash.
    pub fn deal(&self, mut hash: u64) -> Vec<u32> {
        let n = self.hand_size as usize;
        let mut digits = Vec::with_capacity(n);
        for i in 0..self.hand_size {
            let radix = u64::from(self.deck_size - i);
            digits.push((hash % radix) as u32);
            hash /= radix;
        }
        let mut hand = Vec::with_capacity(n);
        for i in 0..n {
            // The i-th digit indexes the cards left after the first i: skip every card dealt
            // before it that is at or below it.
            let mut card = digits[i];
            for j in (0..i).rev() {
                if card >= digits[j] {
                    card += 1;
                }
            }
            hand.push(card);
        }
        hand
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    #[test]
    fn required_entropy_bits_are_kubes() {
        assert_eq!(required_entropy_bits(1024, 6), 60);
        assert_eq!(required_entropy_bits(512, 8), 72);
    }

    #[test]
    fn impossible_sizes_are_refused_with_kubes_words() {
        for (deck, hand, err) in [
            (-100, 8, "deckSize -100 or handSize 8 is not positive"),
            (100, 0, "deckSize 100 or handSize 0 is not positive"),
            (100, 101, "handSize 101 is greater than deckSize 100"),
            (1 << 27, 2, "deckSize 134217728 is impractically large"),
            (
                512,
                8,
                "required entropy bits of deckSize 512 and handSize 8 is greater than 60",
            ),
        ] {
            assert_eq!(Dealer::new(deck, hand).unwrap_err(), err);
        }
        assert!(Dealer::new(1024, 6).is_ok());
    }

    #[test]
    fn a_hand_has_hand_size_distinct_cards_of_the_deck() {
        for (deck, hand) in [
            (4, 4),
            (8, 8),
            (10, 10),
            (12, 12),
            (128, 8),
            (256, 7),
            (512, 6),
        ] {
            let dealer = Dealer::new(deck, hand).unwrap();
            for hash in [0, 1, 0xdead_beef, u64::MAX, 0x0123_4567_89ab_cdef] {
                let cards = dealer.deal(hash);
                assert_eq!(cards.len(), hand as usize);
                assert!(cards.iter().all(|&c| i64::from(c) < deck));
                assert_eq!(cards.iter().collect::<HashSet<_>>().len(), hand as usize);
            }
        }
    }

    #[test]
    fn the_same_hash_deals_the_same_hand() {
        let dealer = Dealer::new(128, 6).unwrap();
        assert_eq!(dealer.deal(42), dealer.deal(42));
        // Hash 0 is every digit 0: the lowest cards in order.
        assert_eq!(dealer.deal(0), [0, 1, 2, 3, 4, 5]);
        // 1 + 2*128: first digit 1, second 2 of the 127 left (card 3, since 1 is dealt).
        assert_eq!(Dealer::new(128, 2).unwrap().deal(1 + 2 * 128), [1, 3]);
    }

    fn falling_factorial(n: u64, m: u64) -> u64 {
        (n - m + 1..=n).product()
    }

    /// kube's TestUniformDistribution: over consecutive hashes, every hand (as a set) is seen
    /// a number of times within one permutation count of the mean.
    #[test]
    fn hands_are_dealt_uniformly() {
        let spare = 64 - MAX_HASH_BITS;
        let ff64 = falling_factorial(64, 3);
        for (deck, hand, hash_max) in [
            (
                64u64,
                3u64,
                1u64 << ((ff64 as f64).log2().ceil() as u32 + spare),
            ),
            (128, 3, falling_factorial(128, 3)),
            (50, 4, falling_factorial(50, 4)),
        ] {
            let dealer = Dealer::new(deck as i64, hand as i64).unwrap();
            let ff = falling_factorial(deck, hand);
            let perms = falling_factorial(hand, hand);
            let mean = hash_max as f64 / ff as f64;
            let (min, max) = (perms * mean.floor() as u64, perms * mean.ceil() as u64);
            let mut seen: HashMap<u64, u64> = HashMap::new();
            for h in 0..hash_max {
                let mut cards = dealer.deal(h);
                cards.sort_unstable();
                let key = cards.iter().fold(0u64, |k, &c| (k << 7) + u64::from(c));
                *seen.entry(key).or_default() += 1;
            }
            assert_eq!(seen.len() as u64, ff / perms, "deck {deck} hand {hand}");
            assert!(
                seen.values().all(|&n| (min..=max).contains(&n)),
                "deck {deck} hand {hand}: counts outside [{min}, {max}]"
            );
        }
    }
}
